// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <optional>
#include <type_traits>
#include <utility>

#include "common/progress.hpp"

namespace daqnet::bindings {

namespace nb = nanobind;

/// A long loop runs without the GIL; this callback takes it back now and then to report
/// progress to Python and to notice Ctrl-C, which stops the loop with what it did so far.
/// After the loop, finish() notes a Ctrl-C still pending and raises any other Python error
/// the callback met.
struct PyProgress {
  nb::object callback;
  bool keyboard_interrupt = false;
  std::optional<nb::python_error> failure;

  bool operator()(int64_t done, int64_t total) {
    nb::gil_scoped_acquire gil;
    try {
      if (PyErr_CheckSignals() != 0) throw nb::python_error();
      if (!callback.is_none()) return nb::cast<bool>(callback(done, total));
      return true;
    } catch (nb::python_error& e) {
      if (e.matches(PyExc_KeyboardInterrupt))
        keyboard_interrupt = true;
      else
        failure.emplace(std::move(e));
      return false;
    }
  }
  void rethrow() {
    if (failure) throw std::move(*failure);
  }
  /// After the loop, with the GIL: a Ctrl-C that came since the last call counts too (left
  /// pending, Python raised it as the result came back, which lost a finished run whole;
  /// seen here, it stops what follows, a scan's next point or the command, and the result
  /// is kept, complete as it is); then any other Python error is raised.
  void finish() {
    if (PyErr_CheckSignals() != 0) {
      nb::python_error e;
      if (e.matches(PyExc_KeyboardInterrupt))
        keyboard_interrupt = true;
      else if (!failure)
        failure.emplace(std::move(e));
    }
    rethrow();
  }
};

/// Run f(progress) without the GIL, for a phase that has no partial result to return
/// (route building): `callback(done, total)` sees its progress, and Ctrl-C, which makes f
/// throw daqnet::Interrupted, raises KeyboardInterrupt.
template <class F>
auto interruptible(nb::object callback, F&& f) {
  PyProgress py{std::move(callback)};
  const Progress cb = [&](int64_t done, int64_t total) { return py(done, total); };
  // After a phase that ran to its end: a Ctrl-C its last report took (a meter's finish()
  // does not stop), or one still pending, ends it all the same (a table file was renamed
  // into place and 'wrote' printed, exit 0, after a Ctrl-C in its last quarter second).
  const auto stop_if_interrupted = [&py] {
    py.finish();
    if (py.keyboard_interrupt) {
      PyErr_SetNone(PyExc_KeyboardInterrupt);
      throw nb::python_error();
    }
  };
  try {
    if constexpr (std::is_void_v<decltype(f(cb))>) {
      {
        nb::gil_scoped_release nogil;
        f(cb);
      }
      stop_if_interrupted();
    } else {
      auto result = [&] {
        nb::gil_scoped_release nogil;
        return f(cb);
      }();
      stop_if_interrupted();
      return result;
    }
  } catch (const Interrupted&) {
    py.rethrow();
    if (py.keyboard_interrupt) {
      PyErr_SetNone(PyExc_KeyboardInterrupt);
      throw nb::python_error();
    }
    throw;
  }
}

}  // namespace daqnet::bindings
