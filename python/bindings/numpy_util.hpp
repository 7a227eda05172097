// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <vector>

namespace daqnet::bindings {

namespace nb = nanobind;

/// Hand a vector to numpy without copying: the array owns it through a capsule.
template <class T>
nb::ndarray<nb::numpy, T, nb::ndim<1>> to_numpy(std::vector<T>&& v) {
  auto* p = new std::vector<T>(std::move(v));
  nb::capsule owner(p, [](void* x) noexcept { delete static_cast<std::vector<T>*>(x); });
  return nb::ndarray<nb::numpy, T, nb::ndim<1>>(p->data(), {p->size()}, owner);
}

template <class T>
nb::ndarray<nb::numpy, T, nb::ndim<2>> to_numpy_2d(std::vector<T>&& v, size_t rows, size_t cols) {
  auto* p = new std::vector<T>(std::move(v));
  nb::capsule owner(p, [](void* x) noexcept { delete static_cast<std::vector<T>*>(x); });
  return nb::ndarray<nb::numpy, T, nb::ndim<2>>(p->data(), {rows, cols}, owner);
}

using IntArray = nb::ndarray<const int32_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

/// A table as a dict of numpy columns, one per field of a row type:
///   return Columns(r.steps).add("step", [](const auto& s) { return s.step; }).dict();
template <class Rows>
class Columns {
public:
  explicit Columns(const Rows& rows) : rows_(rows) {}
  template <class Get>
  Columns& add(const char* name, Get get) {
    using T = std::decay_t<decltype(get(*std::begin(rows_)))>;
    std::vector<T> column;
    column.reserve(std::size(rows_));
    for (const auto& row : rows_) column.push_back(get(row));
    dict_[name] = to_numpy(std::move(column));
    return *this;
  }
  nb::dict dict() const { return dict_; }

private:
  const Rows& rows_;
  nb::dict dict_;
};

void bind_fabric(nb::module_& m);
void bind_routing(nb::module_& m);
void bind_workload(nb::module_& m);
void bind_analysis(nb::module_& m);
void bind_simulate(nb::module_& m);
void bind_evb(nb::module_& m);

}  // namespace daqnet::bindings
