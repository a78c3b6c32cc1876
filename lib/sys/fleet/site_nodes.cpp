#include "site_nodes.hpp"

#include "../../conf/slurm_conf_walk.hpp"
#include "../../env/slurm_nodes.hpp"
#include "../conf/conf_files.hpp"
#include "../node/process_env.hpp"
#include "../slurm/scontrol.hpp"

namespace gangway::sys::fleet {
namespace {

SiteNodes from_slurm_conf(const std::string& path, SiteNodes out) {
    DiskFiles files;
    const SlurmConf conf = read_slurm_conf(path, files);
    if (conf.read.empty()) {
        out.why_not += (out.why_not.empty() ? "" : "; ") + path + ": cannot read it";
        return out;
    }
    out.names = node_names_from_slurm_conf(conf.text);
    if (out.names.empty()) {
        out.why_not += (out.why_not.empty() ? "" : "; ") + path + ": no NodeName line";
        return out;
    }
    out.known = true;
    out.source = path;
    return out;
}

}  // namespace

SiteNodes read_site_nodes(const SiteNodesOptions& o) {
    SiteNodes out;
    if (o.from == NodesFrom::none) return out;
    if (o.from == NodesFrom::slurm_conf) return from_slurm_conf(o.slurm_conf, out);
    const auto text = show_nodes(scontrol_client(o.timeout_s));
    if (text) {
        out.names = node_names_from_scontrol(*text);
        if (!out.names.empty()) {
            out.known = true;
            out.source = "scontrol -o show node";
            return out;
        }
        out.why_not = "scontrol -o show node: no NodeName line";
    } else {
        out.why_not = text.error();
    }
    std::string path = o.slurm_conf.empty() ? env_or("SLURM_CONF") : o.slurm_conf;
    if (path.empty()) path = "/etc/slurm/slurm.conf";
    return from_slurm_conf(path, std::move(out));
}

}  // namespace gangway::sys::fleet
