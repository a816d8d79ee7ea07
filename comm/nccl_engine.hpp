// Probe bodies of the NCCL collective plug-ins and comm.p2p (built only where NCCL was found).
#pragma once

#include "collective_math.hpp"
#include "context.hpp"
#include "probe.hpp"

namespace nodeaudit::comm {

Outcome measure_collective(ProbeContext& ctx, Collective kind);
Outcome measure_p2p(ProbeContext& ctx);

}  // namespace nodeaudit::comm
