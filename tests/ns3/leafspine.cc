// leafspine.cc: ns-3 (3.37) reference for emu's model of hosts and switches
// in a two-rack leaf-spine fabric.
//
// Two leaf switches and one spine switch, all plain IPv4 routers with global
// routing. H hosts per leaf: hosts 0..H-1 on leaf 0, H..2H-1 on leaf 1. Each
// host has one point-to-point link to its leaf (--rate, --delay); each leaf
// has one point-to-point link to the spine (--uplink, --delay). Every switch
// egress device (leaf->host, leaf->spine, spine->leaf) has a DropTailQueue of
// B packets and no queue disc, so a switch port holds B waiting packets plus
// the one on the wire; host egress devices hold 100000 packets and never drop.
//
// At t = 0 every host i sends K UDP packets of S bytes on the wire, back to
// back, to host (i + H) mod 2H, its partner in the other rack; so both racks
// send at once and every packet crosses leaf -> spine -> leaf. Prints one
//   drops PORT N
// line per switch port that dropped something (PORT is leafL.up for leaf L's
// port toward the spine, leafL.down for the spine's port toward leaf L,
// hostN.down for the leaf's port toward host N), then
//   delivered D dropped X last_ns T first_ns F
// and, with --per-packet, one "rx SRC SEQ NS" line per delivered packet
// before all of them. Times are when the packet's last bit reaches its
// receiver, in integer ns; counts are over all hosts.

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <cstdio>
#include <map>
#include <string>
#include <vector>

using namespace ns3;

// Bytes that ns-3 adds below the UDP payload: PPP 2 + IPv4 20 + UDP 8.
// --size counts them, so the payload is size - HDR.
static const uint32_t HDR = 30;
static const uint16_t PORT = 9;

static uint32_t g_h; // hosts per leaf
static uint64_t g_delivered, g_dropped;
static int64_t g_first = -1, g_last = -1;
static bool g_per_packet;
static std::map<uint32_t, uint32_t> g_host_of; // IPv4 address -> host index

// Drop counters per port, indexed as g_port_name.
static std::vector<std::string> g_port_name;
static std::vector<uint64_t> g_port_drops;

static uint32_t
UpPort(uint32_t leaf)
{
    return leaf;
}

static uint32_t
DownPort(uint32_t leaf)
{
    return 2 + leaf;
}

static uint32_t
HostDownPort(uint32_t host)
{
    return 4 + host;
}

static uint32_t
HostUpPort(uint32_t host)
{
    return 4 + 2 * g_h + host;
}

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
            std::printf("rx %u %u %lld\n", g_host_of[src], seq, (long long)now);
        if (g_first < 0)
            g_first = now;
        g_last = now;
        g_delivered++;
    }
}

static void
CountDrop(uint32_t port)
{
    g_port_drops[port]++;
    g_dropped++;
}

// A drop in a device queue: the device (so the port) is known.
static void
QueueDrop(uint32_t port, Ptr<const Packet>)
{
    CountDrop(port);
}

// Destination host of a packet dropped by a traffic-control layer: with no
// queue disc, the layer has added the IPv4 header before it drops.
static uint32_t
DropDst(Ptr<const Packet> p)
{
    Ipv4Header ip;
    p->PeekHeader(ip);
    auto it = g_host_of.find(ip.GetDestination().Get());
    if (it == g_host_of.end())
        NS_FATAL_ERROR("drop of a packet to an unknown address " << ip.GetDestination());
    return it->second;
}

// The PPP device has flow control (a NetDeviceQueueInterface): once B
// packets wait it stops its queue, and the node's traffic-control layer
// drops further packets itself ("TcDrop") before they reach the device
// queue. TcDrop names only the node, so the port follows from the route:
// at leaf L a packet to a host in rack L leaves by that host's port, any
// other by the uplink; at the spine it leaves toward the destination's leaf.
static void
LeafTcDrop(uint32_t leaf, Ptr<const Packet> p)
{
    uint32_t dst = DropDst(p);
    CountDrop(dst / g_h == leaf ? HostDownPort(dst) : UpPort(leaf));
}

static void
SpineTcDrop(Ptr<const Packet> p)
{
    CountDrop(DownPort(DropDst(p) / g_h));
}

static void
HostTcDrop(uint32_t host, Ptr<const Packet>)
{
    CountDrop(HostUpPort(host));
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

static Ptr<Queue<Packet>>
DevQueue(Ptr<NetDevice> d)
{
    return DynamicCast<PointToPointNetDevice>(d)->GetQueue();
}

int
main(int argc, char** argv)
{
    uint32_t h = 4, k = 50, size = 1500, buffer = 32;
    std::string rate = "10Gbps", uplink = "10Gbps";
    Time delay = MicroSeconds(1);
    bool per_packet = false;

    CommandLine cmd(__FILE__);
    cmd.AddValue("hosts", "hosts per leaf H", h);
    cmd.AddValue("packets", "packets per host K", k);
    cmd.AddValue("size", "bytes on the wire per packet, PPP+IPv4+UDP headers included", size);
    cmd.AddValue("rate", "rate of every host<->leaf link", rate);
    cmd.AddValue("uplink", "rate of every leaf<->spine link", uplink);
    cmd.AddValue("delay", "propagation delay of every link", delay);
    cmd.AddValue("buffer", "switch egress queue, packets waiting", buffer);
    cmd.AddValue("per-packet", "print rx SRC SEQ NS per delivered packet", per_packet);
    cmd.Parse(argc, argv);
    // 4 payload bytes carry the sequence number.
    if (h < 1 || h > 16384 || k < 1 || buffer < 1 || size < HDR + 4)
        NS_FATAL_ERROR("need 1 <= hosts <= 16384, packets, buffer >= 1 and size >= " << HDR + 4);
    g_h = h;
    g_per_packet = per_packet;

    uint32_t n = 2 * h;
    g_port_name = {"leaf0.up", "leaf1.up", "leaf0.down", "leaf1.down"};
    for (uint32_t i = 0; i < n; i++)
        g_port_name.push_back("host" + std::to_string(i) + ".down");
    // Host egress ports: never expected to drop, counted all the same.
    for (uint32_t i = 0; i < n; i++)
        g_port_name.push_back("host" + std::to_string(i) + ".up");
    g_port_drops.assign(g_port_name.size(), 0);

    NodeContainer hosts(n), leaves(2), spine(1);
    InternetStackHelper stack;
    stack.InstallAll();

    // The device MTU excludes the PPP header; raise it so a large --size
    // is never fragmented (fragments would change what is counted).
    uint32_t mtu = size - 2 > 1500 ? size - 2 : 1500;
    std::string bq = std::to_string(buffer) + "p";

    // Both devices of a link get the switch queue (B packets) here; the
    // host's device is enlarged below.
    PointToPointHelper edge;
    edge.SetDeviceAttribute("DataRate", StringValue(rate));
    edge.SetDeviceAttribute("Mtu", UintegerValue(mtu));
    edge.SetChannelAttribute("Delay", TimeValue(delay));
    edge.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue(bq));

    PointToPointHelper up;
    up.SetDeviceAttribute("DataRate", StringValue(uplink));
    up.SetDeviceAttribute("Mtu", UintegerValue(mtu));
    up.SetChannelAttribute("Delay", TimeValue(delay));
    up.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue(bq));

    Ipv4AddressHelper addr;
    NetDeviceContainer all;
    std::vector<Ipv4Address> host_ip(n);
    std::vector<Ptr<NetDevice>> host_dev(n), host_down_dev(n);
    for (uint32_t i = 0; i < n; i++)
    {
        // Device 0 is the host's, device 1 the leaf's port toward it.
        NetDeviceContainer d = edge.Install(hosts.Get(i), leaves.Get(i / h));
        // One /30 per link, 10.(i/256).(i%256).0, so any 2H up to 65536 fits.
        char net[32];
        std::snprintf(net, sizeof net, "10.%u.%u.0", i / 256, i % 256);
        addr.SetBase(net, "255.255.255.252");
        host_ip[i] = addr.Assign(d).GetAddress(0);
        g_host_of[host_ip[i].Get()] = i;
        host_dev[i] = d.Get(0);
        host_down_dev[i] = d.Get(1);
        // Hosts never drop: room for far more than K packets.
        DevQueue(d.Get(0))->SetMaxSize(QueueSize("100000p"));
        all.Add(d);
    }
    std::vector<Ptr<NetDevice>> up_dev(2), down_dev(2);
    for (uint32_t l = 0; l < 2; l++)
    {
        // Device 0 is leaf l's uplink port, device 1 the spine's port toward
        // leaf l.
        NetDeviceContainer d = up.Install(leaves.Get(l), spine.Get(0));
        char net[32];
        std::snprintf(net, sizeof net, "192.168.%u.0", l);
        addr.SetBase(net, "255.255.255.252");
        addr.Assign(d);
        up_dev[l] = d.Get(0);
        down_dev[l] = d.Get(1);
        all.Add(d);
    }

    // Ipv4AddressHelper::Assign installs a default queue disc on every device;
    // remove them all so the device queues are the only buffers (a switch
    // port holds exactly B waiting) and nothing can drop or delay at hosts.
    TrafficControlHelper().Uninstall(all);

    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    // Drops: each device queue's Drop (port known), and each node's TcDrop
    // (an arrival finding the device queue stopped, i.e. B waiting; the
    // usual way a port drops here). Every drop is one or the other.
    bool ok = true;
    for (uint32_t l = 0; l < 2; l++)
    {
        ok = ok && DevQueue(up_dev[l])->TraceConnectWithoutContext(
                       "Drop", MakeBoundCallback(&QueueDrop, UpPort(l)));
        ok = ok && DevQueue(down_dev[l])->TraceConnectWithoutContext(
                       "Drop", MakeBoundCallback(&QueueDrop, DownPort(l)));
        ok = ok && leaves.Get(l)->GetObject<TrafficControlLayer>()->TraceConnectWithoutContext(
                       "TcDrop", MakeBoundCallback(&LeafTcDrop, l));
    }
    ok = ok && spine.Get(0)->GetObject<TrafficControlLayer>()->TraceConnectWithoutContext(
                   "TcDrop", MakeCallback(&SpineTcDrop));
    for (uint32_t i = 0; i < n; i++)
    {
        ok = ok && DevQueue(host_down_dev[i])->TraceConnectWithoutContext(
                       "Drop", MakeBoundCallback(&QueueDrop, HostDownPort(i)));
        ok = ok && DevQueue(host_dev[i])->TraceConnectWithoutContext(
                       "Drop", MakeBoundCallback(&QueueDrop, HostUpPort(i)));
        ok = ok && hosts.Get(i)->GetObject<TrafficControlLayer>()->TraceConnectWithoutContext(
                       "TcDrop", MakeBoundCallback(&HostTcDrop, i));
    }
    if (!ok)
        NS_FATAL_ERROR("cannot trace drops");

    for (uint32_t i = 0; i < n; i++)
    {
        Ptr<Socket> sink = Socket::CreateSocket(hosts.Get(i), UdpSocketFactory::GetTypeId());
        sink->Bind(InetSocketAddress(Ipv4Address::GetAny(), PORT));
        // Never drop at the receiver's socket buffer: we count every arrival.
        sink->SetAttribute("RcvBufSize", UintegerValue(0x7fffffff));
        sink->SetRecvCallback(MakeCallback(&Receive));
    }
    for (uint32_t i = 0; i < n; i++)
    {
        Ptr<Socket> s = Socket::CreateSocket(hosts.Get(i), UdpSocketFactory::GetTypeId());
        s->Connect(InetSocketAddress(host_ip[(i + h) % n], PORT));
        // Scheduled in host order, so same-time arrivals at a leaf come in
        // host order (lower hosts first).
        Simulator::Schedule(Seconds(0), &SendAll, s, k, size - HDR);
    }

    Simulator::Run();
    Simulator::Destroy();

    for (size_t p = 0; p < g_port_name.size(); p++)
        if (g_port_drops[p])
            std::printf("drops %s %llu\n",
                        g_port_name[p].c_str(),
                        (unsigned long long)g_port_drops[p]);
    uint64_t total = (uint64_t)n * k;
    if (g_delivered + g_dropped != total)
    {
        std::fprintf(stderr,
                     "leafspine: delivered %llu + dropped %llu != %llu sent\n",
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
