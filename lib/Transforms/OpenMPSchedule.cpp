//===- OpenMPSchedule.cpp - a schedule for unscheduled omp.wsloop --------===//
#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/OpenMP/OpenMPDialect.h"

#include "llvm/ADT/StringSwitch.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNOPENMPSCHEDULE
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

struct AttnOpenMPSchedulePass
    : mlir::attn::impl::AttnOpenMPScheduleBase<AttnOpenMPSchedulePass> {
  using AttnOpenMPScheduleBase::AttnOpenMPScheduleBase;

  void runOnOperation() override {
    std::optional<omp::ClauseScheduleKind> schedule =
        llvm::StringSwitch<std::optional<omp::ClauseScheduleKind>>(kind)
            .Case("static", omp::ClauseScheduleKind::Static)
            .Case("dynamic", omp::ClauseScheduleKind::Dynamic)
            .Case("guided", omp::ClauseScheduleKind::Guided)
            .Default(std::nullopt);
    if (!schedule) {
      getOperation()->emitError() << "attn-openmp-schedule: kind must be static, dynamic or "
                                     "guided, got '"
                                  << kind << "'";
      return signalPassFailure();
    }
    getOperation()->walk([&](omp::WsloopOp loop) {
      if (!loop.getScheduleKind())
        loop.setScheduleKind(*schedule);
    });
  }
};

} // namespace
