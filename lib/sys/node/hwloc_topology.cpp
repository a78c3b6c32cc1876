#include "hwloc_topology.hpp"

#include <hwloc.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <unistd.h>

#include "../../base/error.hpp"
#include "../../base/text.hpp"
#include "cpu_sysfs.hpp"
#include "file.hpp"
#include "sysfs.hpp"

namespace gangway::sys {

namespace {

// One environment variable set for a scope, unless the site already set it.
class ScopedVar {
public:
    ScopedVar(const char* name, const char* value) : name_(name) {
        if (!std::getenv(name)) set_ = ::setenv(name, value, 0) == 0;
    }
    ~ScopedVar() {
        if (set_) ::unsetenv(name_);
    }
    ScopedVar(const ScopedVar&) = delete;
    ScopedVar& operator=(const ScopedVar&) = delete;

private:
    const char* name_;
    bool set_ = false;
};

// hwloc dlopens every component plugin of its plugin directory in
// hwloc_topology_init, before any API call could blacklist one: libxml2 with
// ICU's 30 MB of data, OpenCL, GL/X11, and on GPU nodes CUDA and NVML. In
// slurmstepd that was most of the plugin's cost per step (measured: init
// 4.6 ms with them, 0.13 ms without, plus 1.3 ms to unload them). gangway
// needs none of them: Linux's own backend finds PCI devices from sysfs, and
// hwloc's built-in XML parser reads exported topologies. The only switch is
// the environment, read during init, so it is set for the init alone and
// then restored (nothing the plugin execs or slurmstepd does later sees it);
// a site that sets HWLOC_PLUGINS_BLACKLIST or HWLOC_PLUGINS_PATH itself keeps its own.
class NoHwlocPlugins {
public:
    NoHwlocPlugins()
        : blacklist_("HWLOC_PLUGINS_BLACKLIST",
                     "hwloc_pci,hwloc_xml_libxml,hwloc_opencl,hwloc_gl,hwloc_cuda,hwloc_nvml,hwloc_rsmi,hwloc_levelzero"),
          // An empty plugin path: no directory to open and stat entry by entry.
          path_("HWLOC_PLUGINS_PATH", "") {}

private:
    ScopedVar blacklist_, path_;
};

// A topology context; t stays null when hwloc cannot make one (failure() says why).
struct Handle {
    hwloc_topology_t t = nullptr;
    int err = 0;
    Handle() {
        NoHwlocPlugins lean;
        if (hwloc_topology_init(&t) != 0) {
            err = errno;
            t = nullptr;
        }
    }
    ~Handle() {
        if (t) hwloc_topology_destroy(t);
    }
    [[gnu::cold]] Failure failure() const { return Failure{std::string("hwloc_topology_init failed: ") + std::strerror(err)}; }
    Handle(const Handle&) = delete;
    Handle& operator=(const Handle&) = delete;
};

// hwloc 3.0 turns the OS device type into a bitmask; keep the test in one place.
bool osdev_is(hwloc_obj_t obj, hwloc_obj_osdev_type_t type) {
#if HWLOC_API_VERSION >= 0x00030000
    return (obj->attr->osdev.types & type) != 0;
#else
    return obj->attr->osdev.type == type;
#endif
}

CpuList to_list(hwloc_const_bitmap_t set) {
    CpuList out;
    if (!set) return out;
    unsigned i;
    hwloc_bitmap_foreach_begin(i, set) { out.push_back(i); }
    hwloc_bitmap_foreach_end();
    return out;
}

std::string busid(unsigned domain, unsigned bus, unsigned dev, unsigned func) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%01x", domain, bus, dev, func);
    return buf;
}

PciLocation locate(hwloc_topology_t topo, hwloc_obj_t pcidev) {
    PciLocation loc;
    const auto& a = pcidev->attr->pcidev;
    loc.bus_id = busid(a.domain, a.bus, a.dev, a.func);
    for (hwloc_obj_t p = pcidev->parent; p && hwloc_obj_type_is_io(p->type); p = p->parent) {
        if (p->type != HWLOC_OBJ_BRIDGE) continue;
        const auto& b = p->attr->bridge;
        if (b.upstream_type == HWLOC_OBJ_BRIDGE_HOST) {
            char buf[32];
            std::snprintf(buf, sizeof buf, "host:%04x:%02x", b.downstream.pci.domain, b.downstream.pci.secondary_bus);
            loc.ancestry.push_back(buf);
        } else {
            const auto& u = b.upstream.pci;
            loc.ancestry.push_back(busid(u.domain, u.bus, u.dev, u.func));
        }
    }
    hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(topo, pcidev);
    if (anc) {
        loc.local_cpus = to_list(anc->cpuset);
        if (anc->nodeset && hwloc_bitmap_weight(anc->nodeset) == 1) {
            loc.numa = hwloc_bitmap_first(anc->nodeset);
        } else if (anc->nodeset) {
            // A package with DDR and a memory-only node (HBM in flat mode,
            // Optane) has two NUMA nodes of the package's cpuset: the device's
            // is the first; nodes covering part of it (SNC) leave it unknown.
            for (hwloc_obj_t n = nullptr; (n = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, n));)
                if (hwloc_bitmap_isset(anc->nodeset, n->os_index) && hwloc_bitmap_isequal(n->cpuset, anc->cpuset) &&
                    (loc.numa < 0 || static_cast<int>(n->os_index) < loc.numa))
                    loc.numa = static_cast<int>(n->os_index);
        }
        for (hwloc_obj_t p = anc; p; p = p->parent)
            if (p->type == HWLOC_OBJ_PACKAGE) {
                loc.package = static_cast<int>(p->os_index);
                break;
            }
    }
    return loc;
}

// The OS device of a PCI function that only a compute GPU has: the CUDA,
// NVML, RSMI or OpenCL ones hwloc's GPU components add (an XML exported by a
// full lstopo; the live discovery here blacklists them). DRM's cardN is no
// proof: display chips have one too. Names per SLURM-order preference.
hwloc_obj_t compute_osdev(hwloc_obj_t pcidev) {
    hwloc_obj_t best = nullptr;
    int best_rank = 99;
    for (hwloc_obj_t c = pcidev->io_first_child; c; c = c->next_sibling) {
        if (c->type != HWLOC_OBJ_OS_DEVICE || !c->name) continue;
        if (!osdev_is(c, HWLOC_OBJ_OSDEV_GPU) && !osdev_is(c, HWLOC_OBJ_OSDEV_COPROC)) continue;
        const int rank = std::strncmp(c->name, "rsmi", 4) == 0     ? 0
               : std::strncmp(c->name, "opencl", 6) == 0 ? 1
               : std::strncmp(c->name, "nvml", 4) == 0   ? 2
               : std::strncmp(c->name, "cuda", 4) == 0   ? 3
                                                         : 99;
        if (rank < best_rank) best = c, best_rank = rank;
    }
    return best;
}

// The node's compute GPUs. A PCI function of a GPU vendor counts when
// is_gpu_pci says so by its IDs or when it has a compute OS device; where the
// topology recorded compute OS devices for a vendor's GPUs, that vendor's
// functions without one do not count (NVML and RSMI, hence SLURM, skip them).
std::vector<Gpu> find_gpus(hwloc_topology_t topo) {
    struct Candidate {
        hwloc_obj_t dev, osdev;
    };
    std::vector<Candidate> cands;
    std::map<std::uint16_t, bool> vendor_has_osdevs;
    for (hwloc_obj_t d = nullptr; (d = hwloc_get_next_pcidev(topo, d));) {
        const auto& a = d->attr->pcidev;
        if (a.vendor_id != 0x10de && a.vendor_id != 0x1002) continue;
        hwloc_obj_t os = compute_osdev(d);
        if (!os && !is_gpu_pci(a.vendor_id, a.device_id, a.class_id)) continue;
        if (os) vendor_has_osdevs[a.vendor_id] = true;
        cands.push_back({d, os});
    }
    std::vector<Gpu> out;
    for (const auto& c : cands) {
        if (!c.osdev && vendor_has_osdevs[c.dev->attr->pcidev.vendor_id]) continue;
        Gpu g;
        g.pci = locate(topo, c.dev);
        g.vendor = c.dev->attr->pcidev.vendor_id;
        g.device = c.dev->attr->pcidev.device_id;
        if (c.osdev) g.name = c.osdev->name;
        out.push_back(std::move(g));
    }
    return out;
}

std::vector<NicPort> ports_of(hwloc_obj_t osdev) {
    std::map<unsigned, int> ports;
    for (unsigned i = 0; i < osdev->infos_count; ++i) {
        const char* name = osdev->infos[i].name;
        unsigned n;
        char rest[64];
        if (std::sscanf(name, "Port%u%63s", &n, rest) != 2) continue;
        int& state = ports.emplace(n, -1).first->second;
        // hwloc keeps the first digit of sysfs' "4: ACTIVE"; anything else is an unknown state.
        if (std::strcmp(rest, "State") == 0) state = parse_int(osdev->infos[i].value).value_or(-1);
    }
    std::vector<NicPort> out;
    for (auto [n, s] : ports) out.push_back({n, s});
    return out;
}

Result<Topology> convert(hwloc_topology_t topo) {
    Topology out;
    for (hwloc_obj_t p = nullptr; (p = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PACKAGE, p));)
        out.packages.push_back({p->os_index, to_list(p->cpuset)});
    std::sort(out.packages.begin(), out.packages.end(), [](auto& a, auto& b) { return a.os < b.os; });
    for (hwloc_obj_t n = nullptr; (n = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, n));) {
        NumaNode nn{n->os_index, -1, to_list(n->cpuset)};
        for (hwloc_obj_t p = n->parent; p; p = p->parent)
            if (p->type == HWLOC_OBJ_PACKAGE) {
                nn.package = static_cast<int>(p->os_index);
                break;
            }
        out.numa_nodes.push_back(std::move(nn));
    }
    std::sort(out.numa_nodes.begin(), out.numa_nodes.end(), [](auto& a, auto& b) { return a.os < b.os; });

    std::map<unsigned, Pu> pus;
    for (hwloc_obj_t c = nullptr; (c = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_CORE, c));) {
        Core core{to_list(c->cpuset)};
        if (core.pus.empty()) continue;
        for (unsigned pu : core.pus) pus[pu] = Pu{pu, static_cast<unsigned>(out.cores.size()), -1, -1};
        out.cores.push_back(std::move(core));
    }
    for (hwloc_obj_t p = nullptr; (p = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PU, p));) {
        if (pus.count(p->os_index)) continue;  // a PU without a Core object is its own core
        pus[p->os_index] = Pu{p->os_index, static_cast<unsigned>(out.cores.size()), -1, -1};
        out.cores.push_back(Core{{p->os_index}});
    }
    set_pus(out, std::move(pus));

    out.gpus = find_gpus(topo);
    order_gpus(out);

    for (hwloc_obj_t d = nullptr; (d = hwloc_get_next_pcidev(topo, d));) {
        std::vector<hwloc_obj_t> fabrics, nets;
        for (hwloc_obj_t c = d->io_first_child; c; c = c->next_sibling) {
            if (c->type != HWLOC_OBJ_OS_DEVICE || !c->name) continue;
            if (osdev_is(c, HWLOC_OBJ_OSDEV_OPENFABRICS)) fabrics.push_back(c);
            else if (osdev_is(c, HWLOC_OBJ_OSDEV_NETWORK)) nets.push_back(c);
        }
        if (fabrics.empty() && nets.empty()) continue;
        const PciLocation loc = locate(topo, d);
        // What the NIC is, whatever its interfaces are named (is_fabric_nic_pci).
        const std::uint16_t vendor = d->attr->pcidev.vendor_id, device = d->attr->pcidev.device_id;
        if (!fabrics.empty()) {
            for (hwloc_obj_t f : fabrics) {
                Nic n;
                n.pci = loc;
                n.vendor = vendor;
                n.device = device;
                n.name = f->name;
                n.rdma = true;
                n.ports = ports_of(f);
                const unsigned port = n.ports.empty() ? 1 : n.ports.front().number;
                for (hwloc_obj_t net : nets) {
                    const char* p = hwloc_obj_get_info_by_name(net, "Port");
                    if (nets.size() == 1 || (p && parse_uint(p) == port)) {
                        n.netdev = net->name;
                        break;
                    }
                }
                out.nics.push_back(std::move(n));
            }
        } else {
            for (hwloc_obj_t net : nets) {
                Nic n;
                n.pci = loc;
                n.vendor = vendor;
                n.device = device;
                n.name = net->name;
                n.netdev = net->name;
                n.rdma = false;
                out.nics.push_back(std::move(n));
            }
        }
    }
    std::sort(out.nics.begin(), out.nics.end(), [](auto& a, auto& b) {
        return a.pci.bus_id != b.pci.bus_id ? a.pci.bus_id < b.pci.bus_id : natural_less(a.name, b.name);
    });
    if (out.pus.empty()) return Failure{"hwloc found no CPUs in the topology"};
    return out;
}

void keep_io(hwloc_topology_t t) {
    // Before loading, also for XML: without it hwloc drops every bridge, PCI
    // and OS device. KEEP_IMPORTANT keeps bridges that lead somewhere.
    hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
}

// A whole file through the one reader (file.hpp): with `topology=` set this
// runs in every slurmstepd, where an ifstream's first use (libstdc++'s locale
// set-up) cost about a millisecond. Files past kMaxTopologyFile are refused,
// not read. It may block: a file named on the command line may be a pipe
// (`gangway topo --xml <(lstopo --of xml)`). I/O, so a Result; the callers
// below parse, and pure parsing throws.
constexpr std::size_t kMaxTopologyFile = 64u << 20;

[[gnu::cold]] Failure slurp_failure(const std::string& path, const FileRead& r, const char* what_to_do) {
    if (r.problem == ReadProblem::too_large)
        return Failure{path + " is larger than " + std::to_string(kMaxTopologyFile >> 20) +
                       " MiB, more than any topology; " + what_to_do};
    return Failure{path + " cannot be read (" + std::strerror(r.err) + "); " + what_to_do};
}

Result<std::string> slurp(const std::string& path, const char* what_to_do) {
    ReadOptions o{kMaxTopologyFile};
    o.may_block = true;
    o.regular_only = false;
    auto r = read_file_at(AT_FDCWD, path, o);
    if (!r.ok()) return slurp_failure(path, r, what_to_do);
    return std::move(r.text);
}

// A cache's text parsed (pure: parse_topology throws gangway::Error), its
// refusal as this edge's Failure.
Result<Topology> parsed_cache(const std::string& text, const std::string& path) {
    try {
        return parse_topology(text, path);
    } catch (const Error& e) {
        return Failure{e.what()};
    }
}

}  // namespace

Result<Topology> load_live_topology(IoScope io) {
    Handle h;
    if (!h.t) return h.failure();
    if (io == IoScope::Devices) keep_io(h.t);
    else hwloc_topology_set_io_types_filter(h.t, HWLOC_TYPE_FILTER_KEEP_NONE);
    // The plan reads packages, NUMA nodes, cores and PUs: caches and dies
    // are objects it never reads. Groups stay where they give structure: a
    // NUMA node smaller than its package (SNC, NPS) hangs from a Group with
    // its own CPUs; without that Group hwloc hangs it from the package and
    // gives it the whole package's cpuset (every NUMA node of a DGX A100's
    // package then claimed all 32 of its cores; cpu_sysfs_test found it).
    hwloc_topology_set_cache_types_filter(h.t, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_icache_types_filter(h.t, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_type_filter(h.t, HWLOC_OBJ_GROUP, HWLOC_TYPE_FILTER_KEEP_STRUCTURE);
    hwloc_topology_set_type_filter(h.t, HWLOC_OBJ_DIE, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_type_filter(h.t, HWLOC_OBJ_MEMCACHE, HWLOC_TYPE_FILTER_KEEP_NONE);
    unsigned long flags = HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED;
#if HWLOC_API_VERSION >= 0x00020800
    // Nor NUMA distances, memory attributes or CPU kinds: more sysfs files the plan never reads.
    flags |= HWLOC_TOPOLOGY_FLAG_NO_DISTANCES | HWLOC_TOPOLOGY_FLAG_NO_MEMATTRS | HWLOC_TOPOLOGY_FLAG_NO_CPUKINDS;
#endif
    hwloc_topology_set_flags(h.t, flags);
    // x86: hwloc's CPUID backend binds the thread to every PU in turn (a
    // migration per CPU) to annotate what Linux's sysfs already says.
    for (const char* c : {"cuda", "nvml", "opencl", "rsmi", "levelzero", "gl", "x86"})
        hwloc_topology_set_components(h.t, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, c);
    if (hwloc_topology_load(h.t) != 0)
        return Failure{std::string("hwloc could not discover this machine's topology (") + std::strerror(errno) +
                       "); write a cache elsewhere with `gangway topo --write-cache FILE` and use it"};
    return convert(h.t);
}

namespace {

// hwloc says why an XML is refused only on stderr, and only when
// HWLOC_XML_VERBOSE was set at the process's first XML import (it reads the
// variable once). So every XML import here runs with it set and with stderr
// sent to a temporary file, whose text becomes part of the refusal. XML
// imports are rare (the cache is the fast path); the plugin's live discovery
// and cache reads never come here.
class HwlocXmlReason {
public:
    HwlocXmlReason() : verbose_("HWLOC_XML_VERBOSE", "1") {
        std::fflush(stderr);
        file_ = std::tmpfile();
        saved_ = file_ ? ::dup(STDERR_FILENO) : -1;
        if (saved_ >= 0 && ::dup2(::fileno(file_), STDERR_FILENO) < 0) {
            ::close(saved_);
            saved_ = -1;
        }
    }
    ~HwlocXmlReason() {
        restore();
        if (file_) std::fclose(file_);
    }
    HwlocXmlReason(const HwlocXmlReason&) = delete;
    HwlocXmlReason& operator=(const HwlocXmlReason&) = delete;

    // What hwloc wrote, its (wrapped) lines joined, without hwloc's own prefixes.
    std::string text() {
        restore();
        if (!file_) return "";
        std::string out;
        std::rewind(file_);
        char line[512];
        while (out.size() < 400 && std::fgets(line, sizeof line, file_)) {
            std::string_view l = trim_right(line);
            for (std::string_view prefix : {"hwloc/xml: ", "hwloc: "})
                if (l.starts_with(prefix)) l.remove_prefix(prefix.size());
            if (l.empty()) continue;
            if (!out.empty()) out += ' ';
            out += l;
        }
        // Advice for hwloc's own users; gangway loads XML without libxml2 by design.
        const std::string moot = " If it was not generated by hwloc, try enabling full XML support with libxml2.";
        if (const size_t at = out.find(moot); at != std::string::npos) out.erase(at, moot.size());
        return out;
    }

private:
    void restore() {
        if (saved_ < 0) return;
        std::fflush(stderr);
        ::dup2(saved_, STDERR_FILENO);
        ::close(saved_);
        saved_ = -1;
    }
    ScopedVar verbose_;
    std::FILE* file_ = nullptr;
    int saved_ = -1;
};

// Why hwloc refused `text`, as advice that fits the cause.
std::string refusal(const std::string& path, std::string_view text, const std::string& hwloc_says) {
    const std::string export_it = "export it again with `lstopo --of xml --whole-io FILE.xml`";
    const std::string head = "topology XML " + path;
    if (trim_right(text).empty()) return head + " is empty; " + export_it;
    const std::string_view start = text.substr(0, 512);
    if (start.find("<topology") == std::string_view::npos && start.find("<?xml") == std::string_view::npos)
        return head + " is not XML (it does not start with <?xml or <topology); pass an hwloc XML or a gangway cache";
    if (start.find("<topology version=\"3.") != std::string_view::npos)
        return head + " is in hwloc 3's XML format, which the hwloc 2 here cannot read" +
               (hwloc_says.empty() ? "" : " (hwloc: " + hwloc_says + ")") +
               "; re-export it with `lstopo --of xml --export-xml-flags v2 FILE.xml` on the machine";
    if (trim_right(text).find("</topology>") == std::string_view::npos)
        return head + " is truncated (it ends before </topology>" +
               (hwloc_says.empty() ? "" : "; hwloc: " + hwloc_says) + "); copy or " + export_it;
    return head + " is not an hwloc topology hwloc can load" + (hwloc_says.empty() ? "" : " (hwloc: " + hwloc_says + ")") +
           "; " + export_it;
}

// The refusal of an XML hwloc would not load, from its text: out of line, a
// failure path (the plugin's cache reads never come here).
[[gnu::cold, gnu::noinline]] Failure xml_refusal(const std::string& path, const std::string& hwloc_says) {
    auto text = slurp(path, "pass an hwloc XML file");
    if (!text) return Failure{text.error()};
    return Failure{refusal(path, *text, hwloc_says)};
}

}  // namespace

Result<Topology> load_topology_xml(const std::string& path) {
    if (::access(path.c_str(), R_OK) != 0) {
        const int e = errno;
        return Failure{"topology XML " + path + " cannot be read (" + std::strerror(e) +
                       "); export one with `lstopo --of xml --whole-io FILE.xml`"};
    }
    Handle h;
    if (!h.t) return h.failure();
    keep_io(h.t);
    std::string hwloc_says;
    bool ok;
    {
        HwlocXmlReason reason;
        ok = hwloc_topology_set_xml(h.t, path.c_str()) == 0 && hwloc_topology_load(h.t) == 0;
        hwloc_says = reason.text();
    }
    if (!ok) return xml_refusal(path, hwloc_says);
    return convert(h.t);
}

Result<void> write_topology_cache(const Topology& topo, const std::string& path) {
    // Usually run as root, maybe into a directory others can write: through
    // the one writer that never follows a planted link (lib/sys/node/file.hpp).
    // 0644: slurmstepd reads it as the job's user.
    return write_file_atomic(path, serialize_topology(topo), 0644, "the topology cache");
}

Result<Topology> read_topology_cache(const std::string& path) {
    const auto text = slurp(path, ("write it with `gangway topo --write-cache " + path + "` on the node").c_str());
    if (!text) return Failure{text.error()};
    return parsed_cache(*text, path);
}

Result<Topology> load_topology(const std::string& path, IoScope io) {
    if (path.empty() && io == IoScope::CpusOnly)
        if (auto cpus = read_cpu_topology(sysfs_root())) return std::move(*cpus);
    if (path.empty()) return load_live_topology(io);
    const auto text = slurp(path, "pass an hwloc XML file or a cache written by `gangway topo --write-cache`");
    if (!text) return Failure{text.error()};
    if (text->rfind("gangway-topology", 0) == 0) return parsed_cache(*text, path);
    return load_topology_xml(path);
}

}  // namespace gangway::sys
