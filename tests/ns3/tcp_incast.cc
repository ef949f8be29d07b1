// tcp_incast.cc: ns-3 (3.37) TCP incast reference (Phanishayee et al., FAST
// 2008; Vasudevan et al., SIGCOMM 2009).
//
// N senders, each on its own point-to-point link to one switch (a plain IPv4
// router), each hold one persistent TCP NewReno connection to one receiver
// behind the switch. A "round" (a synchronized read) starts with every sender
// handing SRU bytes to its socket at the same instant; it ends when the
// receiver has read all N * SRU bytes and every sender has the ACK of its last
// byte, and the next round starts --gap (1 ms) later, when the late copies
// of a go-back-N resend and their ACKs are gone (a connection's events do not
// spill into the next round: so emu's tcp transport, which resolves each phase
// of an exchange on its own, sees the same rounds; round times leave the gaps
// out). The switch's egress device toward the receiver has a DropTailQueue
// of B packets and no queue disc (same topology as incast.cc). Prints
//   senders N goodput_mbps G round_ms T timeouts K retransmits X drops D
// where T is the mean round time, G = N * SRU * 8 / T (so the total bytes
// over the total time of all rounds), and K, X, D are totals over
// all rounds: K retransmission timeouts (all senders), X retransmitted data
// segments (all senders), D packets dropped at the switch port.
//
// Connections are opened before the first round (staggered so that the SYNs
// never overflow the port) and are kept open across rounds, as the papers'
// clients keep theirs; so a round's cwnd, ssthresh and RTO estimate carry on
// into the next one (ns-3 has no cwnd restart after idle). Round 1 is the
// connections' first data, so it starts in slow start from the initial
// window; --warmup=W runs W unmeasured rounds first.
//
// --verbose prints each round's time and the senders' RTOs at its start, and
// cross-checks (CongState entries into CA_LOSS, drops elsewhere, the largest
// packet at the port); --trace prints every timeout, port drop, data segment sent (tx or
// retx), ACK received and congestion-state change, one line each, to compare
// two runs event by event.
// Deterministic: no random variables are used.
//
// TCP settings (see main for the attribute names):
//   NewReno (TcpL4Protocol::SocketType = ns3::TcpNewReno) with classic
//   fast recovery (RecoveryType = ns3::TcpClassicRecovery, not ns-3's default
//   PRR), SACK off, timestamps off, delayed ACK count 1 (every segment is
//   ACKed at once), initial cwnd 10 segments (ns-3's default), MinRto
//   --rto-min, ClockGranularity 1 ms (ns-3's default; RTO = max(MinRto,
//   SRTT + max(1 ms, 4 RTTVAR))), RTT estimate seeded by the SYN/SYN-ACK
//   exchange (the RTO before any sample, 1 s from RttEstimator's
//   InitialEstimation, only ever covers the SYN, whose own timeout is
//   ConnTimeout 3 s). DataRetries is raised to 1000 so that a sender never
//   gives up. With timestamps off, data segments carry a 20-byte TCP header,
//   so the default SegmentSize 1458 makes every full data packet 1500 bytes
//   on the wire: PPP 2 + IPv4 20 + TCP 20 + 1458 (1446 with --timestamps,
//   whose option takes 12 more bytes). ns-3's timestamps tick in
//   whole milliseconds, which would make every sub-millisecond RTT sample 0
//   or 1 ms; turning them off gives exact (nanosecond) RTT samples, like the
//   high-resolution timers of Vasudevan et al.
//
// Timeouts are counted where ns-3 handles an RTO on established data
// (TcpSocketBase::ReTxTimeout calls CwndEvent(CA_EVENT_LOSS) on the
// congestion control, and only there), through a NewReno subclass that only
// counts; so back-to-back timeouts while already in CA_LOSS are each
// counted, which a CongState trace (changes only) would miss.

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <cstdio>
#include <map>
#include <vector>

using namespace ns3;

static const uint16_t PORT = 5000;

// Counters over the measured rounds; setup and warm-up rounds are not counted.
static bool g_counting;
static uint64_t g_timeouts, g_loss_entries, g_retransmits, g_port_drops, g_other_drops;
static uint64_t g_port_tc_drops, g_port_queue_drops; // the two parts of g_port_drops
static uint64_t g_data_packets, g_max_wire, g_bad_wire;
static bool g_trace; // --trace: one stderr line per event (see the top)
static uint32_t g_round;

// NewReno that counts retransmission timeouts and does nothing else.
class CountingNewReno : public TcpNewReno
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("CountingNewReno")
                                .SetParent<TcpNewReno>()
                                .AddConstructor<CountingNewReno>();
        return tid;
    }

    CountingNewReno() = default;

    CountingNewReno(const CountingNewReno& o)
        : TcpNewReno(o),
          m_sender(o.m_sender)
    {
    }

    uint32_t m_sender = 0; // for --trace

    void CwndEvent(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCAEvent_t event) override
    {
        if (event == TcpSocketState::CA_EVENT_LOSS && g_counting)
        {
            g_timeouts++;
            if (g_trace)
                std::fprintf(stderr,
                             "rto round %u ns %lld sender %u una %u cwnd %u ssthresh %u\n",
                             g_round,
                             (long long)Simulator::Now().GetNanoSeconds(),
                             m_sender,
                             tcb->m_lastAckedSeq.GetValue(),
                             tcb->m_cWnd.Get(),
                             tcb->m_ssThresh.Get());
        }
        TcpNewReno::CwndEvent(tcb, event);
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<CountingNewReno>(this);
    }
};

NS_OBJECT_ENSURE_REGISTERED(CountingNewReno);

struct Sender
{
    Ptr<Socket> sock;
    uint64_t pending = 0;        // bytes of this round not yet handed to the socket
    SequenceNumber32 high{0};    // end of the highest data byte sent so far
    bool sent_any = false;
    Time rto;                    // latest RTO value (RTO trace)
    uint32_t acked = 0;          // highest ACK received (HighestRxAck trace)
};

static std::vector<Sender> g_snd;
static std::map<uint32_t, uint32_t> g_sender_of; // IPv4 address -> sender
static uint32_t g_n, g_sru, g_rounds, g_warmup;
static uint32_t g_connected, g_accepted;
static uint64_t g_rx_bytes; // bytes read in the current round
static Time g_round_start, g_gap;
static std::vector<double> g_round_s;
static bool g_verbose;

// Hands the socket as much of the pending block as its send buffer takes.
static void
Push(uint32_t i)
{
    Sender& s = g_snd[i];
    while (s.pending > 0)
    {
        uint32_t room = s.sock->GetTxAvailable();
        if (room == 0)
            return; // the send callback comes back when ACKs free space
        uint32_t chunk = s.pending < room ? (uint32_t)s.pending : room;
        int r = s.sock->Send(Create<Packet>(chunk));
        if (r < 0)
            NS_FATAL_ERROR("sender " << i << " socket refused " << chunk << " bytes");
        s.pending -= (uint32_t)r;
    }
}

static void
SendSpace(uint32_t i, Ptr<Socket>, uint32_t)
{
    Push(i);
}

static void
StartRound()
{
    g_round++;
    g_counting = g_round > g_warmup;
    g_rx_bytes = 0;
    g_round_start = Simulator::Now();
    if (g_verbose)
    {
        std::fprintf(stderr, "round %u starts at %.6f s; RTOs (ms):", g_round,
                     g_round_start.GetSeconds());
        for (auto& s : g_snd)
            std::fprintf(stderr, " %.6f", s.rto.GetSeconds() * 1e3);
        std::fprintf(stderr, "\n");
    }
    // All senders at the same instant, in index order.
    for (uint32_t i = 0; i < g_n; i++)
    {
        g_snd[i].pending = g_sru;
        Push(i);
    }
}

// The round is over when the receiver has every byte and every sender the ACK of its
// last one (data starts at sequence number 1).
static void
MaybeEndRound()
{
    if (g_rx_bytes != (uint64_t)g_n * g_sru)
        return;
    for (auto& s : g_snd)
        if (s.acked != 1 + g_round * g_sru)
            return;
    Time t = Simulator::Now() - g_round_start;
    if (g_round > g_warmup)
        g_round_s.push_back(t.GetSeconds());
    if (g_verbose)
        std::fprintf(stderr,
                     "round %u%s: %.6f ms\n",
                     g_round,
                     g_round > g_warmup ? "" : " (warm-up)",
                     t.GetSeconds() * 1e3);
    if (g_round < g_warmup + g_rounds)
        Simulator::Schedule(g_gap, &StartRound);
    else
    {
        g_counting = false;
        Simulator::Stop();
    }
}

static void
Acked(uint32_t i, SequenceNumber32, SequenceNumber32 now)
{
    g_snd[i].acked = now.GetValue();
    MaybeEndRound();
}

static void
Receive(Ptr<Socket> s)
{
    Ptr<Packet> p;
    while ((p = s->Recv()))
    {
        g_rx_bytes += p->GetSize();
        if (g_rx_bytes > (uint64_t)g_n * g_sru)
            NS_FATAL_ERROR("received more than N * SRU bytes in round " << g_round);
    }
    MaybeEndRound();
}

static void
MaybeStart()
{
    // Every handshake done on both ends: start round 1 a millisecond later,
    // when nothing from the setup is left in flight.
    if (g_connected == g_n && g_accepted == g_n)
        Simulator::Schedule(MilliSeconds(1), &StartRound);
}

static void
Accepted(Ptr<Socket> s, const Address&)
{
    s->SetRecvCallback(MakeCallback(&Receive));
    g_accepted++;
    MaybeStart();
}

static void
Connected(Ptr<Socket>)
{
    g_connected++;
    MaybeStart();
}

static void
ConnectFailed(Ptr<Socket>)
{
    NS_FATAL_ERROR("a sender failed to connect");
}

// Sender-side TCP transmissions: a data segment that starts below the highest
// byte already sent is a retransmission.
static void
TcpTx(uint32_t i, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
{
    uint32_t sz = p->GetSize();
    if (sz == 0)
        return;
    Sender& s = g_snd[i];
    SequenceNumber32 seq = h.GetSequenceNumber();
    if (s.sent_any && seq < s.high)
    {
        if (g_counting)
            g_retransmits++;
        if (g_trace)
            std::fprintf(stderr, "retx round %u ns %lld sender %u seq %u\n", g_round,
                         (long long)Simulator::Now().GetNanoSeconds(), i, seq.GetValue());
    }
    if (g_trace && !(s.sent_any && seq < s.high))
        std::fprintf(stderr, "tx round %u ns %lld sender %u seq %u\n", g_round,
                     (long long)Simulator::Now().GetNanoSeconds(), i, seq.GetValue());
    if (!s.sent_any || seq + sz > s.high)
        s.high = seq + sz;
    s.sent_any = true;
}

static void
RtoChange(uint32_t i, Time, Time now)
{
    g_snd[i].rto = now;
}

static void
AckRx(uint32_t i, Ptr<const Packet>, const TcpHeader& h, Ptr<const TcpSocketBase>)
{
    if (g_trace)
        std::fprintf(stderr, "ack round %u ns %lld sender %u ack %u\n", g_round,
                     (long long)Simulator::Now().GetNanoSeconds(), i, h.GetAckNumber().GetValue());
}

static void
CongStateI(uint32_t i, TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now)
{
    if (g_trace)
        std::fprintf(stderr, "state round %u ns %lld sender %u %d\n", g_round,
                     (long long)Simulator::Now().GetNanoSeconds(), i, (int)now);
}

static void
CongState(TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now)
{
    if (now == TcpSocketState::CA_LOSS && g_counting)
        g_loss_entries++;
}

// A drop at the port; c starts with the IPv4 header.
static void
PortDropIp(Ptr<Packet> c)
{
    if (!g_counting)
        return;
    g_port_drops++;
    if (!g_trace)
        return;
    Ipv4Header ip;
    TcpHeader h;
    c->RemoveHeader(ip);
    c->RemoveHeader(h);
    auto it = g_sender_of.find(ip.GetSource().Get());
    std::fprintf(stderr,
                 "drop round %u ns %lld sender %d seq %u len %u\n",
                 g_round,
                 (long long)Simulator::Now().GetNanoSeconds(),
                 it == g_sender_of.end() ? -1 : (int)it->second,
                 h.GetSequenceNumber().GetValue(),
                 c->GetSize());
}

// With no queue disc, the traffic-control layer adds the IPv4 header before
// it drops (or hands the packet to the device).
static void
PortTcDrop(Ptr<const Packet> p)
{
    if (g_counting)
        g_port_tc_drops++;
    PortDropIp(p->Copy());
}

// The device queue's packet carries the PPP header too.
static void
PortQueueDrop(Ptr<const Packet> p)
{
    if (g_counting)
        g_port_queue_drops++;
    Ptr<Packet> c = p->Copy();
    PppHeader ppp;
    c->RemoveHeader(ppp);
    PortDropIp(c);
}

static void
OtherDrop(Ptr<const Packet>)
{
    if (g_counting)
        g_other_drops++;
}

// Packets leaving the switch toward the receiver, PPP header included.
static void
PortTx(Ptr<const Packet> p)
{
    uint32_t sz = p->GetSize();
    if (!g_counting || sz <= 2 + 20 + 20) // pure ACKs or empty segments
        return;
    g_data_packets++;
    if (sz > g_max_wire)
        g_max_wire = sz;
    if (sz > 1500)
        g_bad_wire++;
}

int
main(int argc, char** argv)
{
    uint32_t n = 8, sru = 65536, buffer = 32, segment = 0, rounds = 1;
    uint32_t delack = 1, init_cwnd = 10, warmup = 0;
    std::string rate = "1Gbps";
    Time delay = MicroSeconds(25);
    Time rto_min = MilliSeconds(200);
    Time granularity = MilliSeconds(1);
    Time gap = MilliSeconds(1);
    bool sack = false, timestamps = false;

    CommandLine cmd(__FILE__);
    cmd.AddValue("senders", "number of senders N", n);
    cmd.AddValue("sru", "bytes each sender sends per round (server request unit)", sru);
    cmd.AddValue("rate", "rate of every link", rate);
    cmd.AddValue("delay", "propagation delay of every link", delay);
    cmd.AddValue("buffer", "switch egress queue toward the receiver, packets", buffer);
    cmd.AddValue("rto-min", "TcpSocketBase::MinRto", rto_min);
    cmd.AddValue("segment",
                 "TcpSocket::SegmentSize; 0: 1500 bytes on the wire (1458, or 1446 with "
                 "--timestamps)",
                 segment);
    cmd.AddValue("rounds", "synchronized reads, --gap apart", rounds);
    cmd.AddValue("gap", "idle time between rounds", gap);
    cmd.AddValue("warmup", "unmeasured synchronized reads before the --rounds", warmup);
    cmd.AddValue("delack", "TcpSocket::DelAckCount (1: ACK every segment)", delack);
    cmd.AddValue("init-cwnd", "TcpSocket::InitialCwnd, segments", init_cwnd);
    cmd.AddValue("granularity", "TcpSocketBase::ClockGranularity", granularity);
    cmd.AddValue("sack", "TcpSocketBase::Sack", sack);
    cmd.AddValue("timestamps", "TcpSocketBase::Timestamp", timestamps);
    cmd.AddValue("verbose", "per-round times and RTOs, cross-checks, on stderr", g_verbose);
    cmd.AddValue("trace", "one stderr line per timeout, drop, segment, ACK, state", g_trace);
    cmd.Parse(argc, argv);
    g_gap = gap;
    // PPP 2 + IPv4 20 + TCP 20, and 12 bytes of timestamp option (10, padded
    // to 12) on every segment when timestamps are on.
    if (segment == 0)
        segment = 1500 - 2 - 20 - 20 - (timestamps ? 12 : 0);
    if (n < 1 || sru < 1 || buffer < 1 || rounds < 1 || delack < 1)
        NS_FATAL_ERROR("senders, sru, buffer, rounds, delack must be >= 1");
    g_n = n;
    g_sru = sru;
    g_rounds = rounds;
    g_warmup = warmup;

    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpNewReno::GetTypeId()));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(TcpClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segment));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(delack));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(init_cwnd));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(rto_min));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(granularity));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(sack));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(timestamps));
    // Never give up on a connection, however many timeouts in a row.
    Config::SetDefault("ns3::TcpSocket::DataRetries", UintegerValue(1000));

    NodeContainer senders(n), sw(1), rx(1);
    InternetStackHelper stack;
    stack.InstallAll();

    // Sender device queues never fill (cwnd is bounded by the 128 KiB
    // receive window, under 100 segments); their drops would be counted as
    // "other" drops anyway.
    PointToPointHelper edge;
    edge.SetDeviceAttribute("DataRate", StringValue(rate));
    edge.SetChannelAttribute("Delay", TimeValue(delay));
    edge.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1000p"));

    // Device 0 of this link is the switch's egress port toward the receiver.
    PointToPointHelper port;
    port.SetDeviceAttribute("DataRate", StringValue(rate));
    port.SetChannelAttribute("Delay", TimeValue(delay));
    port.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue(std::to_string(buffer) + "p"));

    Ipv4AddressHelper addr;
    NetDeviceContainer all;
    for (uint32_t i = 0; i < n; i++)
    {
        NetDeviceContainer d = edge.Install(senders.Get(i), sw.Get(0));
        char net[32];
        std::snprintf(net, sizeof net, "10.%u.%u.0", i / 256, i % 256);
        addr.SetBase(net, "255.255.255.252");
        g_sender_of[addr.Assign(d).GetAddress(0).Get()] = i;
        all.Add(d);
    }
    NetDeviceContainer egress = port.Install(sw.Get(0), rx.Get(0));
    addr.SetBase("192.168.0.0", "255.255.255.252");
    Ipv4Address rx_ip = addr.Assign(egress).GetAddress(1);
    all.Add(egress);

    // Device queues are the only buffers (see incast.cc).
    TrafficControlHelper().Uninstall(all);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    // Drops at the switch port: the traffic-control layer drops arrivals that
    // find the device queue stopped (TcDrop); the queue's own Drop is traced
    // too so that none is missed.
    Ptr<PointToPointNetDevice> port_dev = DynamicCast<PointToPointNetDevice>(egress.Get(0));
    Ptr<TrafficControlLayer> sw_tc = sw.Get(0)->GetObject<TrafficControlLayer>();
    if (!port_dev->GetQueue()->TraceConnectWithoutContext("Drop", MakeCallback(&PortQueueDrop)) ||
        !sw_tc->TraceConnectWithoutContext("TcDrop", MakeCallback(&PortTcDrop)) ||
        !port_dev->TraceConnectWithoutContext("PhyTxBegin", MakeCallback(&PortTx)))
        NS_FATAL_ERROR("cannot trace the switch port");
    // Everywhere else (senders, the switch's other ports, the receiver):
    // expected to be zero, checked under --verbose.
    for (uint32_t d = 0; d < all.GetN(); d++)
    {
        Ptr<PointToPointNetDevice> dev = DynamicCast<PointToPointNetDevice>(all.Get(d));
        if (dev != port_dev)
            dev->GetQueue()->TraceConnectWithoutContext("Drop", MakeCallback(&OtherDrop));
    }
    for (uint32_t i = 0; i < n; i++)
        senders.Get(i)->GetObject<TrafficControlLayer>()->TraceConnectWithoutContext(
            "TcDrop",
            MakeCallback(&OtherDrop));
    rx.Get(0)->GetObject<TrafficControlLayer>()->TraceConnectWithoutContext(
        "TcDrop",
        MakeCallback(&OtherDrop));

    Ptr<Socket> listener = Socket::CreateSocket(rx.Get(0), TcpSocketFactory::GetTypeId());
    listener->Bind(InetSocketAddress(Ipv4Address::GetAny(), PORT));
    listener->Listen();
    listener->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                                MakeCallback(&Accepted));

    g_snd.resize(n);
    for (uint32_t i = 0; i < n; i++)
    {
        Ptr<Socket> s = Socket::CreateSocket(senders.Get(i), TcpSocketFactory::GetTypeId());
        Ptr<TcpSocketBase> tcp = DynamicCast<TcpSocketBase>(s);
        Ptr<CountingNewReno> cc = CreateObject<CountingNewReno>();
        cc->m_sender = i;
        tcp->SetCongestionControlAlgorithm(cc);
        g_snd[i].sock = s;
        s->Bind();
        s->SetConnectCallback(MakeCallback(&Connected), MakeCallback(&ConnectFailed));
        s->SetSendCallback(MakeBoundCallback(&SendSpace, i));
        if (!s->TraceConnectWithoutContext("Tx", MakeBoundCallback(&TcpTx, i)) ||
            !s->TraceConnectWithoutContext("RTO", MakeBoundCallback(&RtoChange, i)) ||
            !s->TraceConnectWithoutContext("HighestRxAck", MakeBoundCallback(&Acked, i)) ||
            !s->TraceConnectWithoutContext("Rx", MakeBoundCallback(&AckRx, i)) ||
            !s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&CongStateI, i)) ||
            !s->TraceConnectWithoutContext("CongState", MakeCallback(&CongState)))
            NS_FATAL_ERROR("cannot trace sender " << i);
        // Staggered 10 us apart so that the SYNs never queue at the port.
        Simulator::Schedule(MicroSeconds(10 * i),
                            [s, rx_ip] { s->Connect(InetSocketAddress(rx_ip, PORT)); });
    }

    Simulator::Run();
    Simulator::Destroy();

    if (g_round_s.size() != rounds)
    {
        std::fprintf(stderr,
                     "tcp_incast: only %zu of %u rounds completed\n",
                     g_round_s.size(),
                     rounds);
        return 1;
    }
    double sum_t = 0;
    for (double t : g_round_s)
        sum_t += t;
    double mean_t = sum_t / rounds;
    if (g_verbose)
        std::fprintf(stderr,
                     "check: CA_LOSS entries %llu, port drops TcDrop %llu queue Drop %llu, "
                     "other drops %llu, data packets at port %llu, max wire bytes %llu, "
                     "over 1500 %llu\n",
                     (unsigned long long)g_loss_entries,
                     (unsigned long long)g_port_tc_drops,
                     (unsigned long long)g_port_queue_drops,
                     (unsigned long long)g_other_drops,
                     (unsigned long long)g_data_packets,
                     (unsigned long long)g_max_wire,
                     (unsigned long long)g_bad_wire);
    std::printf("senders %u goodput_mbps %.1f round_ms %.3f timeouts %llu retransmits %llu "
                "drops %llu\n",
                n,
                (double)n * sru * 8 / mean_t / 1e6,
                mean_t * 1e3,
                (unsigned long long)g_timeouts,
                (unsigned long long)g_retransmits,
                (unsigned long long)g_port_drops);
    return 0;
}
