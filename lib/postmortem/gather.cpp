#include "gather.hpp"

#include <algorithm>

namespace gangway::postmortem {

const char* to_string(Took t) {
    switch (t) {
        case Took::accepted: return "accepted";
        case Took::duplicate: return "this node has sent its record of the job already (a replay?)";
        case Took::not_job_node: return "the node is not one of the job's nodes";
        case Took::other_list: return "the record's list of the job's nodes is not the job's";
        case Took::judged: return "the job has been judged already";
        case Took::too_many_jobs: return "too many jobs pending; try again later";
        case Took::too_big: return "too many records' bytes pending; try again later";
    }
    return "?";
}

unsigned http_status(Took t) {
    switch (t) {
        case Took::accepted: return 202;
        case Took::duplicate:
        case Took::judged: return 409;
        case Took::not_job_node:
        case Took::other_list: return 403;
        case Took::too_many_jobs:
        case Took::too_big: return 503;
    }
    return 500;
}

Took StopsGather::add(NodeRecord r, std::size_t bytes, std::int64_t now_s) {
    if (judged_.count(r.job)) return Took::judged;
    auto it = jobs_.find(r.job);
    if (it == jobs_.end()) {
        if (jobs_.size() >= limits_.max_jobs) return Took::too_many_jobs;
        if (bytes_ + bytes > limits_.max_bytes || bytes > limits_.max_job_bytes) return Took::too_big;
        if (r.job_nodes.empty() || r.job_nodes.size() > limits_.max_nodes) return Took::other_list;
        if (std::find(r.job_nodes.begin(), r.job_nodes.end(), r.node) == r.job_nodes.end()) return Took::not_job_node;
        Job j;
        j.first_s = now_s;
        j.nodes = r.job_nodes;
        std::sort(j.nodes.begin(), j.nodes.end());
        j.nodes.erase(std::unique(j.nodes.begin(), j.nodes.end()), j.nodes.end());
        it = jobs_.emplace(r.job, std::move(j)).first;
    } else {
        Job& j = it->second;
        if (!std::binary_search(j.nodes.begin(), j.nodes.end(), r.node)) return Took::not_job_node;
        // Until SLURM has said, the first record's list is the job's: a second
        // that names another cannot widen it.
        if (!j.from_slurm) {
            auto mine = r.job_nodes;
            std::sort(mine.begin(), mine.end());
            mine.erase(std::unique(mine.begin(), mine.end()), mine.end());
            if (mine != j.nodes) return Took::other_list;
        }
        if (j.sent.count(r.node)) return Took::duplicate;
        if (j.bytes + bytes > limits_.max_job_bytes || bytes_ + bytes > limits_.max_bytes) return Took::too_big;
    }
    Job& j = it->second;
    if (!std::binary_search(j.nodes.begin(), j.nodes.end(), r.node)) return Took::not_job_node;
    j.sent.insert(r.node);
    j.bytes += bytes;
    bytes_ += bytes;
    j.sizes.push_back(bytes);
    j.records.push_back(std::move(r));
    return Took::accepted;
}

std::vector<std::string> StopsGather::set_slurm_nodes(std::uint32_t job, std::vector<std::string> nodes) {
    std::vector<std::string> dropped;
    const auto it = jobs_.find(job);
    if (it == jobs_.end()) return dropped;
    Job& j = it->second;
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    if (nodes.size() > limits_.max_nodes) nodes.resize(limits_.max_nodes);
    j.nodes = std::move(nodes);
    j.from_slurm = true;
    std::vector<NodeRecord> kept;
    std::vector<std::size_t> sizes;
    for (std::size_t i = 0; i < j.records.size(); ++i) {
        if (std::binary_search(j.nodes.begin(), j.nodes.end(), j.records[i].node)) {
            kept.push_back(std::move(j.records[i]));
            sizes.push_back(j.sizes[i]);
        } else {
            dropped.push_back(j.records[i].node);
            j.sent.erase(j.records[i].node);
            j.bytes -= j.sizes[i];
            bytes_ -= j.sizes[i];
        }
    }
    j.records = std::move(kept);
    j.sizes = std::move(sizes);
    return dropped;
}

std::vector<std::uint32_t> StopsGather::jobs_without_slurm_nodes() const {
    std::vector<std::uint32_t> out;
    for (const auto& [id, j] : jobs_)
        if (!j.from_slurm) out.push_back(id);
    return out;
}

void StopsGather::remember(std::uint32_t job) {
    if (!judged_.insert(job).second) return;
    judged_order_.push_back(job);
    if (judged_order_.size() > kRecentJobs) {
        judged_.erase(judged_order_.front());
        judged_order_.pop_front();
    }
}

std::vector<GatheredJob> StopsGather::take_due(std::int64_t now_s) {
    std::vector<GatheredJob> out;
    for (auto it = jobs_.begin(); it != jobs_.end();) {
        Job& j = it->second;
        const bool complete = j.sent.size() >= j.nodes.size();
        if (!complete && now_s - j.first_s < limits_.wait_s) {
            ++it;
            continue;
        }
        GatheredJob g;
        g.job = it->first;
        for (const auto& n : j.nodes)
            if (!j.sent.count(n)) g.missing.push_back(n);
        g.records = std::move(j.records);
        bytes_ -= j.bytes;
        remember(it->first);
        it = jobs_.erase(it);
        out.push_back(std::move(g));
    }
    return out;
}

}  // namespace gangway::postmortem
