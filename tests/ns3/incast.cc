// incast.cc: ns-3 (3.37) reference for emu's switch port model.
//
// N senders, each on its own point-to-point link to one switch (a plain IPv4
// router), each send K UDP packets back to back at t = 0 to one receiver
// behind the switch. The switch's egress device toward the receiver has a
// DropTailQueue of B packets and no queue disc, so its only buffer is B
// waiting packets plus the one on the wire. Prints
//   delivered D dropped X last_ns T first_ns F
// and, with --per-packet, one "rx SENDER SEQ NS" line per delivered packet
// before it. Times are when the packet's last bit reaches the receiver.

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <cstdio>
#include <map>

using namespace ns3;

// Bytes that ns-3 adds below the UDP payload: PPP 2 + IPv4 20 + UDP 8.
// --size counts them, so the payload is size - HDR.
static const uint32_t HDR = 30;
static const uint16_t PORT = 9;

static uint64_t g_delivered, g_dropped;
static int64_t g_first = -1, g_last = -1;
static bool g_per_packet;
static std::map<uint32_t, uint32_t> g_sender_of; // IPv4 address -> sender index

// The stack is synchronous (no processing delay), so the socket sees the
// packet at the same instant as the receiver's device receive event, i.e.
// when its last bit arrives.
static void
Receive(Ptr<Socket> s)
{
    Address from;
    Ptr<Packet> p;
    while ((p = s->RecvFrom(from)))
    {
        int64_t now = Simulator::Now().GetNanoSeconds();
        uint8_t b[4] = {0, 0, 0, 0};
        p->CopyData(b, sizeof b);
        uint32_t seq = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
        uint32_t src = InetSocketAddress::ConvertFrom(from).GetIpv4().Get();
        if (g_per_packet)
            std::printf("rx %u %u %lld\n", g_sender_of[src], seq, (long long)now);
        if (g_first < 0)
            g_first = now;
        g_last = now;
        g_delivered++;
    }
}

static void
Dropped(Ptr<const Packet>)
{
    g_dropped++;
}

// Hands all K packets to the socket at once; the device serialises them back
// to back. The sequence number goes in the payload's first 4 bytes so that
// --per-packet can name each packet.
static void
SendAll(Ptr<Socket> s, uint32_t k, uint32_t payload)
{
    std::vector<uint8_t> buf(payload, 0);
    for (uint32_t i = 0; i < k; i++)
    {
        for (int j = 0; j < 4; j++)
            buf[j] = (uint8_t)(i >> (24 - 8 * j));
        if (s->Send(Create<Packet>(buf.data(), payload)) < 0)
            NS_FATAL_ERROR("sender socket refused packet " << i);
    }
}

int
main(int argc, char** argv)
{
    uint32_t n = 15, k = 11, size = 1500, buffer = 100;
    std::string rate = "10Gbps", port_rate;
    Time delay = MicroSeconds(1);
    bool per_packet = false;

    CommandLine cmd(__FILE__);
    cmd.AddValue("senders", "number of senders N", n);
    cmd.AddValue("packets", "packets per sender K", k);
    cmd.AddValue("size", "bytes on the wire per packet, PPP+IPv4+UDP headers included", size);
    cmd.AddValue("rate", "rate of every link", rate);
    cmd.AddValue("port-rate", "rate of the switch->receiver link (default: --rate)", port_rate);
    cmd.AddValue("buffer", "switch egress queue, packets waiting", buffer);
    cmd.AddValue("delay", "propagation delay of every link", delay);
    cmd.AddValue("per-packet", "print rx SENDER SEQ NS per delivered packet", per_packet);
    cmd.Parse(argc, argv);
    if (port_rate.empty())
        port_rate = rate;
    // 4 payload bytes carry the sequence number.
    if (n < 1 || k < 1 || buffer < 1 || size < HDR + 4)
        NS_FATAL_ERROR("need senders, packets, buffer >= 1 and size >= " << HDR + 4);
    g_per_packet = per_packet;

    NodeContainer senders(n), sw(1), rx(1);
    InternetStackHelper stack;
    stack.InstallAll();

    // The device MTU excludes the PPP header; raise it so a large --size
    // is never fragmented (fragments would change what is counted).
    uint32_t mtu = size - 2 > 1500 ? size - 2 : 1500;

    // Sender queues hold all K packets, so senders never drop.
    PointToPointHelper edge;
    edge.SetDeviceAttribute("DataRate", StringValue(rate));
    edge.SetDeviceAttribute("Mtu", UintegerValue(mtu));
    edge.SetChannelAttribute("Delay", TimeValue(delay));
    edge.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue(std::to_string(k) + "p"));

    // Device 0 of this link is the switch's egress port toward the receiver.
    PointToPointHelper port;
    port.SetDeviceAttribute("DataRate", StringValue(port_rate));
    port.SetDeviceAttribute("Mtu", UintegerValue(mtu));
    port.SetChannelAttribute("Delay", TimeValue(delay));
    port.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue(std::to_string(buffer) + "p"));

    Ipv4AddressHelper addr;
    NetDeviceContainer all;
    std::vector<Ipv4Address> sender_ip(n);
    for (uint32_t i = 0; i < n; i++)
    {
        // One /30 per link, 10.(i/256).(i%256).0, so any N up to 65536 fits.
        NetDeviceContainer d = edge.Install(senders.Get(i), sw.Get(0));
        char net[32];
        std::snprintf(net, sizeof net, "10.%u.%u.0", i / 256, i % 256);
        addr.SetBase(net, "255.255.255.252");
        sender_ip[i] = addr.Assign(d).GetAddress(0);
        g_sender_of[sender_ip[i].Get()] = i;
        all.Add(d);
    }
    NetDeviceContainer egress = port.Install(sw.Get(0), rx.Get(0));
    addr.SetBase("192.168.0.0", "255.255.255.252");
    Ipv4Address rx_ip = addr.Assign(egress).GetAddress(1);
    all.Add(egress);

    // Ipv4AddressHelper::Assign installs a default queue disc on every device;
    // remove them all so the device queues are the only buffers (the switch
    // port holds exactly B) and nothing can drop or delay at the senders.
    TrafficControlHelper().Uninstall(all);

    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    // Drops at the port. The PPP device has flow control (a
    // NetDeviceQueueInterface): once B packets wait it stops its queue and the
    // traffic-control layer drops further packets itself ("TcDrop" on the
    // switch's TrafficControlLayer) before they reach the device queue.
    // Count both so no drop is missed; they are the same event (an arrival
    // finding B packets waiting).
    Ptr<Queue<Packet>> q = DynamicCast<PointToPointNetDevice>(egress.Get(0))->GetQueue();
    Ptr<TrafficControlLayer> tc = sw.Get(0)->GetObject<TrafficControlLayer>();
    if (!q->TraceConnectWithoutContext("Drop", MakeCallback(&Dropped)) ||
        !tc->TraceConnectWithoutContext("TcDrop", MakeCallback(&Dropped)))
        NS_FATAL_ERROR("cannot trace drops at the switch port");

    Ptr<Socket> sink = Socket::CreateSocket(rx.Get(0), UdpSocketFactory::GetTypeId());
    sink->Bind(InetSocketAddress(Ipv4Address::GetAny(), PORT));
    // Never drop at the receiver's socket buffer: we count every arrival.
    sink->SetAttribute("RcvBufSize", UintegerValue(0x7fffffff));
    sink->SetRecvCallback(MakeCallback(&Receive));

    for (uint32_t i = 0; i < n; i++)
    {
        Ptr<Socket> s = Socket::CreateSocket(senders.Get(i), UdpSocketFactory::GetTypeId());
        s->Connect(InetSocketAddress(rx_ip, PORT));
        // Scheduled in sender order, so ties at the switch go to lower indices.
        Simulator::Schedule(Seconds(0), &SendAll, s, k, size - HDR);
    }

    Simulator::Run();
    Simulator::Destroy();

    uint64_t total = (uint64_t)n * k;
    if (g_delivered + g_dropped != total)
    {
        std::fprintf(stderr,
                     "incast: delivered %llu + dropped %llu != %llu sent\n",
                     (unsigned long long)g_delivered,
                     (unsigned long long)g_dropped,
                     (unsigned long long)total);
        return 1;
    }
    std::printf("delivered %llu dropped %llu last_ns %lld first_ns %lld\n",
                (unsigned long long)g_delivered,
                (unsigned long long)g_dropped,
                (long long)g_last,
                (long long)g_first);
    return 0;
}
