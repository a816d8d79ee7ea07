// The interconnect probes' figures: what each one records, in which unit, and which way is better.
// Dependency-free (figures.hpp only): compiled into the probe catalogue that the scorer and the
// reporters link, with or without NCCL and MPI.
#include "harness/core/figures.hpp"

namespace nodeaudit {
namespace {

// Every collective records the same figures (nccl-tests' columns and the curve's summary).
ProbeFigures collective(std::string id, std::string meaning) {
  const Better higher = Better::higher, lower = Better::lower;
  return {std::move(id), std::move(meaning), ProbeRole::measurement,
          {{"time_us", unit::us, lower, {"size", "gpus"}, "time of one collective at the message size"},
           {"algbw", unit::gbps, higher, {"size", "gpus"}, "message bytes / time"},
           {"busbw", unit::gbps, higher, {"size", "gpus"}, "algbw x the collective's bus factor (nccl-tests), comparable with the links' rate"},
           {"latency_small", unit::us, lower, {"gpus"}, "time of one collective at the smallest message size"},
           {"busbw_peak", unit::gbps, higher, {"gpus"}, "the highest median busbw over the message sizes"},
           {"size_at_90pct", unit::bytes, lower, {"gpus"}, "the smallest message size reaching 90% of the peak busbw"},
           {"pair_busbw", unit::gbps, higher, {"a", "b", "size"}, "busbw of the collective over every GPU of two hosts (--pairs)"},
           {"host_pair_busbw", unit::gbps, higher, {"host", "size"}, "the median busbw of the pairs a host is in (--pairs)"}},
          "`size`: message bytes; `gpus`: the GPUs taking part; `a`, `b`: the two hosts of a pair, `host`: one host "
          "(--pairs, across hosts). With --pairs and 3 or more hosts, finding `comm.slow_host` for a host whose pairs' "
          "median busbw is the slow-host factor or more below the median of the pairs without it; "
          "`info.pairs_judgement` says the rule."};
}

}  // namespace

std::vector<ProbeFigures> comm_probe_figures() {
  const Better higher = Better::higher, lower = Better::lower;
  const std::vector<std::string> fabric_labels{"size", "ranks"};
  return {
      collective("comm.allreduce",
                 "NCCL all-reduce over the node's GPUs: bus bandwidth per message size (the curve), its "
                 "peak and the small-message latency (busbw higher, latency lower is better)."),
      collective("comm.allgather", "NCCL all-gather: bus bandwidth per message size, peak and latency."),
      collective("comm.reducescatter", "NCCL reduce-scatter: bus bandwidth per message size, peak and latency."),
      collective("comm.broadcast", "NCCL broadcast from GPU 0: bus bandwidth per message size, peak and latency."),
      collective("comm.alltoall", "NCCL all-to-all: bus bandwidth per message size, peak and latency."),
      {"comm.p2p", "GPU-to-GPU copy bandwidth per pair, one direction and both (decimal GB/s, higher is better).",
       ProbeRole::measurement,
       {{"bandwidth", unit::gbps, higher, {"src", "dst", "direction"}, "bytes copied per second from src to dst (bi: both ways at once, counted both ways)"}},
       "`src`, `dst`: GPU indices; `direction`: uni or bi."},
      {"comm.host-fabric",
       "MPI ping-pong and all-reduce on host memory between ranks: the network path without "
       "GPUs (bandwidth higher, latency lower is better).",
       ProbeRole::measurement,
       {{"pingpong_bw", unit::gbps, higher, fabric_labels, "message bytes / one-way time between two ranks"},
        {"pingpong_latency", unit::us, lower, fabric_labels, "one-way time (round trip / 2) between two ranks"},
        {"allreduce_bw", unit::gbps, higher, fabric_labels, "MPI all-reduce bus bandwidth over every rank: size / time x 2(n-1)/n, as nccl-tests' busbw"},
        {"pair_bw", unit::gbps, higher, {"a", "b", "size"}, "ping-pong bandwidth between the first ranks of two hosts"},
        {"pair_latency", unit::us, lower, {"a", "b", "size"}, "one-way time between the first ranks of two hosts"},
        {"host_pair_bw", unit::gbps, higher, {"host", "size"}, "the median bandwidth of the pairs a host is in"}},
       "`size`: message bytes; `ranks`: the MPI ranks taking part; `a`, `b`: the two hosts of a pair, `host`: one "
       "host (--pairs). With --pairs and 3 or more hosts, finding `host_fabric.slow_host` for a host whose pairs' "
       "median bandwidth is the slow-host factor or more below the median of the pairs without it; "
       "`info.pairs_schedule`, `info.pair_formula` and `info.pairs_judgement` say how."},
  };
}

}  // namespace nodeaudit
