// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

namespace daqnet::simulate {

// The relative margins of the flow-level simulation, shared by the flow network and the
// one-shot step solver so that both group completions and judge saturation alike.

/// Rates closer than this count as unchanged: re-solving the same problem in a different
/// order may differ in the last bits, which must not widen a re-solve for nothing.
inline constexpr double kSameRate = 1e-12;
/// A resource is saturated when its load is within this of its capacity.
inline constexpr double kFull = 1e-9;
/// A flow slower by more than this than every flow that started or finished keeps its rate.
inline constexpr double kSlower = 1e-6;
/// Completions within this of each other happen together.
inline constexpr double kSameTime = 1e-12;

}  // namespace daqnet::simulate
