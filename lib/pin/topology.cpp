#include "topology.hpp"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include "../base/error.hpp"
#include "../base/text.hpp"

namespace gangway {

const char* to_string(PciDistance d) {
    switch (d) {
        case PciDistance::Switch: return "switch";
        case PciDistance::HostBridge: return "hostbridge";
        case PciDistance::Numa: return "numa";
        case PciDistance::Socket: return "socket";
        case PciDistance::System: return "system";
    }
    return "system";
}

PciDistance pci_distance(const PciLocation& a, const PciLocation& b) {
    // The first bridge on a's way up that b also passes through.
    for (const auto& bridge : a.ancestry) {
        if (std::find(b.ancestry.begin(), b.ancestry.end(), bridge) != b.ancestry.end())
            return bridge.rfind("host:", 0) == 0 ? PciDistance::HostBridge : PciDistance::Switch;
    }
    if (a.numa >= 0 && a.numa == b.numa) return PciDistance::Numa;
    if (a.package >= 0 && a.package == b.package) return PciDistance::Socket;
    return PciDistance::System;
}

PciDistance numa_distance(const Topology& topo, const PciLocation& dev, unsigned numa_os) {
    if (dev.numa >= 0 && static_cast<unsigned>(dev.numa) == numa_os) return PciDistance::Numa;
    for (const auto& n : topo.numa_nodes)
        if (n.os == numa_os && n.package >= 0 && n.package == dev.package) return PciDistance::Socket;
    return PciDistance::System;
}

namespace {

// Every range of a cpu or index list ("0-13,112-125"), read in place, item
// by item: f(lo, hi) for each. Throws for a malformed item and once the
// entries of the whole list, repeats included, pass kMaxCpuListEntries (each
// range bounded alone, 400 of them in 4 KiB took minutes).
template <class F>
void for_each_range(std::string_view text, F&& f) {
    const std::string_view t = trim_right(text, "\n ");
    auto bad = [&](const std::string& why) {
        return Error("bad cpu list \"" + excerpt(text) + "\": " + why + "; write it like 0-13,112-125 (PU OS indexes)");
    };
    if (t.empty()) throw bad("it is empty");
    std::size_t listed = 0;
    for (std::size_t pos = 0;;) {
        const auto comma = t.find(',', pos);
        const std::string_view part = t.substr(pos, comma == std::string_view::npos ? comma : comma - pos);
        if (part.empty()) throw bad("empty element");
        const size_t dash = part.find('-');
        unsigned lo = 0, hi = 0;
        if (dash == std::string_view::npos) {
            const auto v = parse_uint(part);
            if (!v) throw bad("\"" + excerpt(part) + "\" is not a number");
            lo = hi = *v;
        } else {
            const auto a = parse_uint(part.substr(0, dash)), b = parse_uint(part.substr(dash + 1));
            if (!a || !b) throw bad("\"" + excerpt(part) + "\" is not a range");
            lo = *a;
            hi = *b;
            if (hi < lo) throw bad("range \"" + excerpt(part) + "\" runs backwards");
        }
        if (hi - lo >= kMaxCpuListEntries - listed)
            throw bad("it lists more than " + std::to_string(kMaxCpuListEntries) + " entries");
        listed += hi - lo + 1;
        f(lo, hi);
        if (comma == std::string_view::npos) return;
        pos = comma + 1;
    }
}

}  // namespace

CpuList parse_cpu_list(std::string_view text) {
    // The ranges sorted and merged, then written out: no tree of CPUs (a
    // std::set of 2^20 took 40 MB), and each CPU written once.
    std::vector<std::pair<unsigned, unsigned>> ranges;
    std::size_t items = 0;  // checked whole first: then its exact size, not twice it while growing
    for_each_range(text, [&](unsigned, unsigned) { ++items; });
    ranges.reserve(items);
    for_each_range(text, [&](unsigned lo, unsigned hi) { ranges.emplace_back(lo, hi); });
    std::sort(ranges.begin(), ranges.end());
    std::size_t merged = 0, count = 0;
    for (const auto& r : ranges) {
        if (merged > 0 && r.first <= ranges[merged - 1].second) {  // overlaps the one before: one range
            auto& last = ranges[merged - 1];
            if (r.second > last.second) count += r.second - last.second, last.second = r.second;
            continue;
        }
        ranges[merged++] = r;
        count += std::size_t(r.second - r.first) + 1;
    }
    ranges.resize(merged);
    CpuList out;
    out.reserve(count);
    // Counted, not `c <= hi`: that never ends when hi is the largest unsigned.
    for (const auto& [lo, hi] : ranges)
        for (unsigned k = 0; k <= hi - lo; ++k) out.push_back(lo + k);
    return out;
}

std::vector<unsigned> parse_index_list(std::string_view text) {
    std::size_t count = 0;
    for_each_range(text, [&](unsigned lo, unsigned hi) { count += std::size_t(hi - lo) + 1; });
    std::vector<unsigned> out;
    out.reserve(count);  // the list was checked whole first: its exact size, once
    for_each_range(text, [&](unsigned lo, unsigned hi) {
        for (unsigned k = 0; k <= hi - lo; ++k) out.push_back(lo + k);
    });
    return out;
}

std::string format_cpu_list(const CpuList& cpus) {
    std::string out;
    for (size_t i = 0; i < cpus.size();) {
        size_t j = i;
        while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
        if (!out.empty()) out += ',';
        out += std::to_string(cpus[i]);
        if (j > i) out += '-' + std::to_string(cpus[j]);
        i = j + 1;
    }
    return out;
}

CpuList pus_of_cores(const Topology& topo, const std::vector<unsigned>& core_ids) {
    std::set<unsigned> out;
    for (unsigned id : core_ids) {
        if (id >= topo.cores.size())
            throw Error("core " + std::to_string(id) + " is not on this node (it has " +
                        std::to_string(topo.cores.size()) + " cores, ids 0-" +
                        std::to_string(topo.cores.empty() ? 0 : topo.cores.size() - 1) +
                        "); the topology does not match the machine SLURM allocated: regenerate the cache");
        out.insert(topo.cores[id].pus.begin(), topo.cores[id].pus.end());
    }
    return CpuList(out.begin(), out.end());
}

CpuList all_cpus(const Topology& topo) {
    CpuList out;
    for (const auto& p : topo.pus) out.push_back(p.os);
    std::sort(out.begin(), out.end());
    return out;
}

CpuList intersect(const CpuList& a, const CpuList& b) {
    CpuList out;
    std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
    return out;
}

CpuList unite(const CpuList& a, const CpuList& b) {
    CpuList out;
    std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
    return out;
}

CpuList subtract(const CpuList& a, const CpuList& b) {
    CpuList out;
    std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
    return out;
}

bool natural_less(std::string_view a, std::string_view b) {
    size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        const bool da = a[i] >= '0' && a[i] <= '9', db = b[j] >= '0' && b[j] <= '9';
        if (da && db) {
            size_t ie = i, je = j;
            while (ie < a.size() && a[ie] >= '0' && a[ie] <= '9') ++ie;
            while (je < b.size() && b[je] >= '0' && b[je] <= '9') ++je;
            std::string_view na = a.substr(i, ie - i), nb = b.substr(j, je - j);
            while (na.size() > 1 && na[0] == '0') na.remove_prefix(1);
            while (nb.size() > 1 && nb[0] == '0') nb.remove_prefix(1);
            if (na.size() != nb.size()) return na.size() < nb.size();
            if (na != nb) return na < nb;
            i = ie;
            j = je;
        } else {
            if (a[i] != b[j]) return a[i] < b[j];
            ++i;
            ++j;
        }
    }
    return a.size() - i < b.size() - j;
}

// --- cache file ----------------------------------------------------------------
//
//   gangway-topology 2
//   package OS CPUS
//   numa OS PACKAGE CPUS
//   core PUS
//   gpu BUSID VENDOR DEVICE NUMA PACKAGE NAME LOCALCPUS ANCESTRY
//   nic NAME BUSID NETDEV RDMA PORTS NUMA PACKAGE LOCALCPUS ANCESTRY VENDOR DEVICE
//
// "-" stands for an empty field; VENDOR/DEVICE are hex; PORTS is "1:4,2:1"
// (number:state); ANCESTRY is comma-separated, parent first. Version 1 is
// version 2 without the nic lines' VENDOR and DEVICE: it is still read (its
// NICs' ids unknown, 0), so a cache written before keeps working after an
// upgrade; such a NIC is a fabric NIC by its RDMA device or its name only
// (`gangway topo` says to rewrite the cache). A gangway of version 1 refuses
// a version 2 file by its first line, saying to rewrite it.

namespace {

constexpr const char* kMagic = "gangway-topology 2";
constexpr const char* kMagicV1 = "gangway-topology 1";

std::string or_dash(const std::string& s) { return s.empty() ? "-" : s; }
std::string cpus_or_dash(const CpuList& c) { return c.empty() ? "-" : format_cpu_list(c); }

std::string list_or_dash(const std::vector<std::string>& v) { return or_dash(join(v, ",")); }

std::string hex4(unsigned v) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "%04x", v & 0xffffu);
    return buf;
}

}  // namespace

std::string serialize_topology(const Topology& topo) {
    std::ostringstream out;
    out << kMagic << "\n";
    for (const auto& p : topo.packages) out << "package " << p.os << ' ' << cpus_or_dash(p.cpus) << "\n";
    for (const auto& n : topo.numa_nodes)
        out << "numa " << n.os << ' ' << n.package << ' ' << cpus_or_dash(n.cpus) << "\n";
    for (const auto& c : topo.cores) out << "core " << cpus_or_dash(c.pus) << "\n";
    for (const auto& g : topo.gpus)
        out << "gpu " << g.pci.bus_id << ' ' << hex4(g.vendor) << ' ' << hex4(g.device) << ' ' << g.pci.numa << ' '
            << g.pci.package << ' ' << or_dash(g.name) << ' ' << cpus_or_dash(g.pci.local_cpus) << ' '
            << list_or_dash(g.pci.ancestry) << "\n";
    for (const auto& n : topo.nics) {
        const std::string ports = join(n.ports, ",", [](const NicPort& p) {
            return std::to_string(p.number) + ":" + std::to_string(p.state);
        });
        out << "nic " << n.name << ' ' << n.pci.bus_id << ' ' << or_dash(n.netdev) << ' ' << (n.rdma ? 1 : 0) << ' '
            << or_dash(ports) << ' ' << n.pci.numa << ' ' << n.pci.package << ' ' << cpus_or_dash(n.pci.local_cpus)
            << ' ' << list_or_dash(n.pci.ancestry) << ' ' << hex4(n.vendor) << ' ' << hex4(n.device) << "\n";
    }
    out << "end\n";
    return out.str();
}

namespace {

constexpr unsigned kMaxCachePu = 65535;
constexpr std::ptrdiff_t kMaxCacheBridges = 256;

// The blank-separated fields of a cache line, at most `max`: the last one
// holds the rest of the line, unsplit.
std::vector<std::string> cache_fields(std::string_view line, std::size_t max) {
    std::vector<std::string> out;
    for (std::size_t at = line.find_first_not_of(' '); at != std::string_view::npos && out.size() < max;
         at = line.find_first_not_of(' ', at)) {
        const auto end = out.size() + 1 == max ? line.size() : std::min(line.find(' ', at), line.size());
        out.emplace_back(line.substr(at, end - at));
        at = end;
    }
    return out;
}

}  // namespace

// Cost (SECURITY.md, "What a parser may spend"): O(n log n); at most
// kMaxCpuListEntries CPUs in all its lists, PUs up to 65,535 and 256 bridges
// above a device, so memory at most 48 bytes a byte of the file and 11 MiB
// (the CPUs, 4 MiB, and the rebuilt PU table, 108 bytes a PU). lib/sys reads
// at most 64 MiB of file.
Topology parse_topology(std::string_view text, const std::string& origin) {
    Topology topo;
    unsigned lineno = 0;
    std::string_view rest = text;
    bool saw_magic = false, saw_end = false;
    std::size_t nic_fields = 12;  // version 1: 10 (no VENDOR DEVICE)
    auto fail = [&](const std::string& why) {
        return Error("topology cache " + origin + " is corrupt at line " + std::to_string(lineno) + " (" + why +
                     "); delete it and rewrite it with `gangway topo --write-cache " + origin + "`");
    };
    // Every list of the file counts against one bound, as each list's own
    // entries do (found by tests/fuzz/topology_cache: lines of 777,777 CPUs
    // each took over 10 s to parse; a real cache lists each PU a few times).
    std::size_t listed = 0;
    auto cpus_field = [&](std::string_view f) -> CpuList {
        if (f == "-") return {};
        CpuList l;
        try {
            l = parse_cpu_list(f);
        } catch (const Error&) {
            throw fail("bad cpu list \"" + std::string(f) + "\"");
        }
        listed += l.size();
        if (listed > kMaxCpuListEntries) throw fail("more than " + std::to_string(kMaxCpuListEntries) + " CPUs listed in all");
        return l;
    };
    auto int_field = [&](std::string_view f) {
        const auto v = parse_int(f);
        if (!v) throw fail("\"" + std::string(f) + "\" is not a number");
        return *v;
    };
    auto uint_field = [&](std::string_view f, int base = 10) {
        const auto v = parse_uint(f, base);
        if (!v) throw fail("\"" + std::string(f) + "\" is not a number");
        return *v;
    };
    auto str_field = [](std::string_view f) { return f == "-" ? std::string() : std::string(f); };
    // A device's bridges up to its host bridge: PCI has 256 buses, so no
    // path is longer, and a line of 1 MiB of "a," was half a million strings.
    auto list_field = [&](std::string_view f) {
        if (f == "-") return std::vector<std::string>();
        if (std::count(f.begin(), f.end(), ',') >= kMaxCacheBridges)
            throw fail("more than " + std::to_string(kMaxCacheBridges) + " bridges above a device");
        return split_keep_empty(f, ',');
    };
    while (!rest.empty()) {
        size_t nl = rest.find('\n');
        std::string_view line = rest.substr(0, nl);
        rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
        ++lineno;
        if (lineno == 1) {
            if (line == kMagicV1) nic_fields = 10;
            else if (line != kMagic)
                throw Error("topology cache " + origin + " is not a gangway topology cache (first line is not \"" +
                            kMagic + "\"); rewrite it with `gangway topo --write-cache " + origin + "`");
            saw_magic = true;
            continue;
        }
        if (saw_end) throw fail("text after \"end\"");
        // No line has more than 12 fields (a nic line): a 13th is not split off the rest.
        const std::vector<std::string> f = cache_fields(line, 13);
        if (f.empty()) continue;
        const auto& kind = f[0];
        if (kind == "end" && f.size() == 1) {
            saw_end = true;
        } else if (kind == "package" && f.size() == 3) {
            topo.packages.push_back({uint_field(f[1]), cpus_field(f[2])});
        } else if (kind == "numa" && f.size() == 4) {
            topo.numa_nodes.push_back({uint_field(f[1]), int_field(f[2]), cpus_field(f[3])});
        } else if (kind == "core" && f.size() == 2) {
            Core c{cpus_field(f[1])};
            if (c.pus.empty()) throw fail("a core without PUs");
            // Each core's PU is a node of the table rebuilt below (some 64
            // bytes each): "core 0-1048575", 15 bytes, made 80 MB of it.
            // Linux numbers at most 8,192 CPUs (NR_CPUS); a cache past
            // 65,535 is not of a machine.
            if (c.pus.back() > kMaxCachePu) throw fail("PU " + std::to_string(c.pus.back()) + " is past " + std::to_string(kMaxCachePu));
            topo.cores.push_back(std::move(c));
        } else if (kind == "gpu" && f.size() == 9) {
            Gpu g;
            g.pci.bus_id = f[1];
            g.vendor = static_cast<std::uint16_t>(uint_field(f[2], 16));
            g.device = static_cast<std::uint16_t>(uint_field(f[3], 16));
            g.pci.numa = int_field(f[4]);
            g.pci.package = int_field(f[5]);
            g.name = str_field(f[6]);
            g.pci.local_cpus = cpus_field(f[7]);
            g.pci.ancestry = list_field(f[8]);
            topo.gpus.push_back(std::move(g));
        } else if (kind == "nic" && f.size() == nic_fields) {
            Nic n;
            n.name = f[1];
            n.pci.bus_id = f[2];
            n.netdev = str_field(f[3]);
            n.rdma = f[4] == "1";
            if (f[5] != "-") {
                for (const std::string& p : split_keep_empty(f[5], ',')) {
                    const auto colon = p.find(':');
                    if (colon == std::string::npos) throw fail("bad port \"" + p + "\"");
                    n.ports.push_back({uint_field(std::string_view(p).substr(0, colon)),
                                       int_field(std::string_view(p).substr(colon + 1))});
                }
            }
            n.pci.numa = int_field(f[6]);
            n.pci.package = int_field(f[7]);
            n.pci.local_cpus = cpus_field(f[8]);
            n.pci.ancestry = list_field(f[9]);
            if (nic_fields == 12) {
                n.vendor = static_cast<std::uint16_t>(uint_field(f[10], 16));
                n.device = static_cast<std::uint16_t>(uint_field(f[11], 16));
            }
            topo.nics.push_back(std::move(n));
        } else {
            throw fail("unexpected \"" + std::string(line.substr(0, 40)) + "\"");
        }
    }
    if (!saw_magic)
        throw Error("topology cache " + origin + " is empty; rewrite it with `gangway topo --write-cache " + origin + "`");
    if (!saw_end) {
        ++lineno;
        throw fail("it is truncated, the \"end\" line is missing");
    }
    // Rebuild the PU table from cores, NUMA nodes and packages.
    std::map<unsigned, Pu> pus;
    for (unsigned ci = 0; ci < topo.cores.size(); ++ci)
        for (unsigned pu : topo.cores[ci].pus) {
            if (pus.count(pu))
                throw Error("topology cache " + origin + " is corrupt (PU " + std::to_string(pu) +
                            " is in two cores); rewrite it with `gangway topo --write-cache " + origin + "`");
            pus[pu] = Pu{pu, ci, -1, -1};
        }
    if (pus.empty())
        throw Error("topology cache " + origin + " lists no CPUs; rewrite it with `gangway topo --write-cache " +
                    origin + "`");
    set_pus(topo, std::move(pus));
    // Caches written before the display-chip rule may list an ES1000 as a GPU.
    std::erase_if(topo.gpus, [](const Gpu& g) { return !is_gpu_pci(g.vendor, g.device, 0x0302); });
    order_gpus(topo);
    return topo;
}

void set_pus(Topology& topo, std::map<unsigned, Pu> pus) {
    // numa_nodes is by OS index; the first node listing a PU is its own. hwloc 2
    // gives a memory-only node (KNL MCDRAM, HBM in flat mode, Optane) its
    // parent's cpuset, and such nodes are numbered after the DDR ones.
    for (const auto& n : topo.numa_nodes)
        for (unsigned c : n.cpus)
            if (auto it = pus.find(c); it != pus.end() && it->second.numa < 0) it->second.numa = static_cast<int>(n.os);
    for (const auto& p : topo.packages)
        for (unsigned c : p.cpus)
            if (auto it = pus.find(c); it != pus.end()) it->second.package = static_cast<int>(p.os);
    topo.pus.clear();
    for (auto& [os, pu] : pus) topo.pus.push_back(pu);
}

bool is_gpu_pci(std::uint16_t vendor_id, std::uint16_t device_id, std::uint16_t class_id) {
    const bool gpu_class = class_id == 0x0300 || class_id == 0x0302 || class_id == 0x0380;
    if (!gpu_class) return false;
    if (vendor_id == 0x10de) return true;
    // AMD's pre-GCN display parts (ES1000 515e/5969, Radeon 7000 5159, Rage XL
    // 4752) sit on servers as BMC or onboard VGA; ROCm never sees them.
    if (vendor_id == 0x1002) return device_id < 0x4000 || device_id > 0x5fff;
    return false;
}

bool is_fabric_nic_pci(std::uint16_t vendor_id, std::uint16_t /*device_id*/) {
    return vendor_id == 0x17db;  // Cray: Cassini (0501 Cassini 1), HPE Slingshot
}

const char* to_string(GpuOrder o) {
    switch (o) {
        case GpuOrder::PciBus:
        case GpuOrder::AmdPciBus: return "PCI bus id order";
        case GpuOrder::AmdRsmi: return "RSMI order";
        case GpuOrder::AmdOpenCl: return "OpenCL order";
    }
    return "PCI bus id order";
}

const char* describe(GpuOrder o) {
    switch (o) {
        case GpuOrder::PciBus: return "PCI bus id order (NVML's order, SLURM's for NVIDIA)";
        case GpuOrder::AmdRsmi: return "RSMI order from hwloc's rsmi devices (SLURM's RSMI autodetection)";
        case GpuOrder::AmdOpenCl: return "ROCm OpenCL order from hwloc's opencl devices (RSMI's order)";
        case GpuOrder::AmdPciBus:
            return "PCI bus id order; the topology records no rsmi or opencl devices, and SLURM's RSMI order can "
                   "differ (export it with lstopo on the node with ROCm installed to know)";
    }
    return "PCI bus id order";
}

namespace {

// The enumeration index in an rsmiN or openclPdN OS device name, -1 for other names.
long smi_index(const std::string& name, GpuOrder kind) {
    std::string_view digits;
    if (kind == GpuOrder::AmdRsmi && name.rfind("rsmi", 0) == 0) {
        digits = std::string_view(name).substr(4);
    } else if (kind == GpuOrder::AmdOpenCl && name.rfind("opencl", 0) == 0) {
        const size_t d = name.find('d', 6);
        if (d == std::string::npos) return -1;
        digits = std::string_view(name).substr(d + 1);
    } else {
        return -1;
    }
    const auto v = parse_uint(digits);
    return v ? static_cast<long>(*v) : -1;
}

}  // namespace

void order_gpus(Topology& topo) {
    auto& g = topo.gpus;
    std::stable_sort(g.begin(), g.end(), [](const Gpu& a, const Gpu& b) { return a.pci.bus_id < b.pci.bus_id; });
    topo.gpu_order = GpuOrder::PciBus;
    const bool all_amd = !g.empty() && std::all_of(g.begin(), g.end(), [](const Gpu& x) { return x.vendor == 0x1002; });
    if (!all_amd) return;
    for (GpuOrder kind : {GpuOrder::AmdRsmi, GpuOrder::AmdOpenCl}) {
        std::set<long> seen;
        for (const auto& x : g) seen.insert(smi_index(x.name, kind));
        // Usable only when every GPU has its own index.
        if (seen.count(-1) || seen.size() != g.size()) continue;
        std::stable_sort(g.begin(), g.end(),
                         [&](const Gpu& a, const Gpu& b) { return smi_index(a.name, kind) < smi_index(b.name, kind); });
        topo.gpu_order = kind;
        return;
    }
    topo.gpu_order = GpuOrder::AmdPciBus;
}

}  // namespace gangway
