#include "evb/libfabric_transport.hpp"

#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>

namespace daqnet::evb {

namespace {

// The wire tag: the sender's rank above the transport's 32-bit tag.
constexpr int kRankShift = 32;

std::uint64_t wire_tag(int sender, Tag tag) { return (static_cast<std::uint64_t>(sender) << kRankShift) | tag; }
int sender_of(std::uint64_t wire) { return static_cast<int>(wire >> kRankShift); }

std::string text(const char* s) { return s ? s : "?"; }
std::string peer_text(int peer) { return peer == kAnySource ? "any rank" : "rank " + std::to_string(peer); }

}  // namespace

std::string LibfabricTransport::error_text(int err) const { return fi_strerror(err < 0 ? -err : err); }

LibfabricTransport::LibfabricTransport(MPI_Comm comm, WaitMode wait, const LibfabricOptions& options) : pause_(wait) {
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &size_);
  auto check = [&](int err, const char* what) {
    if (err)
      throw TransportError("libfabric: " + std::string(what) + " failed on rank " + std::to_string(rank_) + ": " +
                           error_text(err));
  };
  try {
    fi_info* hints = fi_allocinfo();
    if (!hints) throw TransportError("libfabric: fi_allocinfo failed");
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_TAGGED;
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    hints->tx_attr->msg_order = FI_ORDER_SAS;
    hints->rx_attr->msg_order = FI_ORDER_SAS;
    hints->domain_attr->threading = FI_THREAD_DOMAIN;
    // Only what matters to registered memory, which this transport never uses: no FI_MR_LOCAL.
    hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    if (!options.provider.empty()) hints->fabric_attr->prov_name = strdup(options.provider.c_str());
    if (!options.domain.empty()) hints->domain_attr->name = strdup(options.domain.c_str());
    const std::uint32_t version = fi_version();  // of the library loaded, not the headers
    const std::string library =
        "libfabric " + std::to_string(FI_MAJOR(version)) + "." + std::to_string(FI_MINOR(version));
    int err = fi_getinfo(FI_VERSION(1, 9), nullptr, nullptr, 0, hints, &info_);
    fi_freeinfo(hints);  // frees the names too
    if (err || !info_) {
      const char* forced = std::getenv("FI_PROVIDER");
      std::string which = options.provider.empty() ? "" : " '" + options.provider + "'";
      if (!options.domain.empty()) which += " on domain '" + options.domain + "'";
      throw TransportError("libfabric: no provider" + which +
                           " offers reliable tagged messages kept in order (FI_EP_RDM, FI_TAGGED, FI_ORDER_SAS) in " +
                           library + (forced ? std::string(" with FI_PROVIDER=") + forced : std::string()) + ": " +
                           error_text(err ? err : -FI_ENODATA) +
                           "; `fi_info -t FI_EP_RDM -c FI_TAGGED` lists what a libfabric offers (the one loaded "
                           "here may be MPI's own)");
    }
    description_ = text(info_->fabric_attr->prov_name) + ", " + text(info_->fabric_attr->name) + ", " +
                   text(info_->domain_attr->name) + ", " + library;
    max_message_bytes_ = info_->ep_attr->max_msg_size;
    // The wire tag needs 32 bits for daqnet's tag and enough above them for the largest rank.
    // Providers match fewer bits than 64 (CXI: 48); mem_tag_format's highest bit says how many.
    const int rank_bits = std::max(1, static_cast<int>(std::bit_width(static_cast<unsigned>(size_ - 1))));
    const std::uint64_t format = info_->ep_attr->mem_tag_format;
    const int tag_bits = format ? static_cast<int>(std::bit_width(format)) : 64;
    if (kRankShift + rank_bits > tag_bits)
      throw TransportError("libfabric: provider '" + text(info_->fabric_attr->prov_name) + "' matches " +
                           std::to_string(tag_bits) + "-bit tags, and " + std::to_string(size_) + " ranks need " +
                           std::to_string(kRankShift + rank_bits) + " (32 for daqnet's tag, " +
                           std::to_string(rank_bits) + " for the sender's rank)");
    any_source_ignore_ = ((std::uint64_t{1} << rank_bits) - 1) << kRankShift;

    check(fi_fabric(info_->fabric_attr, &fabric_, nullptr), "fi_fabric");
    check(fi_domain(fabric_, info_, &domain_, nullptr), "fi_domain");
    fi_cq_attr cq_attr{};
    cq_attr.format = FI_CQ_FORMAT_TAGGED;
    cq_attr.wait_obj = FI_WAIT_NONE;  // progress() polls; the wait mode paces it
    check(fi_cq_open(domain_, &cq_attr, &cq_, nullptr), "fi_cq_open");
    fi_av_attr av_attr{};
    av_attr.type = FI_AV_UNSPEC;
    av_attr.count = static_cast<std::size_t>(size_);
    check(fi_av_open(domain_, &av_attr, &av_, nullptr), "fi_av_open");
    check(fi_endpoint(domain_, info_, &ep_, nullptr), "fi_endpoint");
    check(fi_ep_bind(ep_, &av_->fid, 0), "fi_ep_bind(av)");
    check(fi_ep_bind(ep_, &cq_->fid, FI_TRANSMIT | FI_RECV), "fi_ep_bind(cq)");
    check(fi_enable(ep_), "fi_enable");

    // Every rank's endpoint name, in rank order, with its provider and fabric. Ranks that
    // chose another provider or fabric (a host without the others' NIC, or on another subnet)
    // or the same name as another rank (an address every host has, such as lo's) could not
    // reach each other: refused on every rank alike, before any message goes out.
    std::vector<char> name(256);
    std::size_t length = name.size();
    err = fi_getname(&ep_->fid, name.data(), &length);
    if (err == -FI_ETOOSMALL) {
      name.resize(length);
      err = fi_getname(&ep_->fid, name.data(), &length);
    }
    check(err, "fi_getname");
    constexpr std::size_t kText = 64, kHead = 2 * kText + 8;  // provider, fabric, name length
    std::vector<char> mine(kHead + length, 0);
    std::strncpy(mine.data(), text(info_->fabric_attr->prov_name).c_str(), kText - 1);
    std::strncpy(mine.data() + kText, text(info_->fabric_attr->name).c_str(), kText - 1);
    const std::uint64_t name_length = length;
    std::memcpy(mine.data() + 2 * kText, &name_length, 8);
    std::memcpy(mine.data() + kHead, name.data(), length);
    int record = static_cast<int>(mine.size()), largest = 0;
    MPI_Allreduce(&record, &largest, 1, MPI_INT, MPI_MAX, comm);
    mine.resize(static_cast<std::size_t>(largest), 0);
    std::vector<char> all(static_cast<std::size_t>(largest) * static_cast<std::size_t>(size_));
    MPI_Allgather(mine.data(), largest, MPI_BYTE, all.data(), largest, MPI_BYTE, comm);
    auto at = [&](int r) { return all.data() + static_cast<std::size_t>(r) * static_cast<std::size_t>(largest); };
    auto length_of = [&](int r) {
      std::uint64_t n = 0;
      std::memcpy(&n, at(r) + 2 * kText, 8);
      return n;
    };
    const std::string choose =
        ": give bench.libfabric_provider and bench.libfabric_domain so every rank uses one fabric";
    std::vector<char> names;
    std::set<std::string> seen;
    for (int r = 0; r < size_; ++r) {
      const char* rec = at(r);
      if (std::strncmp(rec, at(0), 2 * kText) != 0)
        throw TransportError("libfabric: rank " + std::to_string(r) + " uses " + std::string(rec) + " on fabric " +
                             std::string(rec + kText) + ", rank 0 " + std::string(at(0)) + " on fabric " +
                             std::string(at(0) + kText) + choose);
      if (length_of(r) != length_of(0))
        throw TransportError("libfabric: rank " + std::to_string(r) + "'s endpoint name has " +
                             std::to_string(length_of(r)) + " bytes, rank 0's " + std::to_string(length_of(0)) +
                             " (another address family?)" + choose);
      std::string endpoint(rec + kHead, length_of(r));
      if (!seen.insert(endpoint).second)
        throw TransportError("libfabric: rank " + std::to_string(r) +
                             "'s endpoint has the same name as an earlier rank's (an address every host has, "
                             "such as lo's?)" +
                             choose);
      names.insert(names.end(), endpoint.begin(), endpoint.end());
    }
    addresses_.assign(static_cast<std::size_t>(size_), FI_ADDR_NOTAVAIL);
    int inserted = fi_av_insert(av_, names.data(), static_cast<std::size_t>(size_), addresses_.data(), 0, nullptr);
    if (inserted != size_)
      throw TransportError("libfabric: rank " + std::to_string(rank_) + " could resolve " +
                           std::to_string(std::max(inserted, 0)) + " of " + std::to_string(size_) +
                           " endpoint addresses" + (inserted < 0 ? ": " + error_text(inserted) : ""));
  } catch (...) {
    close();  // the constructor throws, so the destructor will not run
    throw;
  }
}

LibfabricTransport::~LibfabricTransport() { close(); }

void LibfabricTransport::close() {
  // Children before parents; each pointer is cleared, so a second call does nothing.
  if (ep_) fi_close(&ep_->fid);
  if (av_) fi_close(&av_->fid);
  if (cq_) fi_close(&cq_->fid);
  if (domain_) fi_close(&domain_->fid);
  if (fabric_) fi_close(&fabric_->fid);
  if (info_) fi_freeinfo(info_);
  ep_ = nullptr;
  av_ = nullptr;
  cq_ = nullptr;
  domain_ = nullptr;
  fabric_ = nullptr;
  info_ = nullptr;
}

std::size_t LibfabricTransport::slot() {
  if (free_.empty()) {
    // A new high of operations under way: double the slots, so that later highs are rare
    // and release() never grows free_ (allocations after the warm-up are counted).
    const std::size_t old = ops_.size(), grown = std::max<std::size_t>(256, 2 * old);
    ops_.resize(grown);
    free_.reserve(grown);
    for (std::size_t i = grown; i-- > old;) {
      ops_[i].index = i;
      free_.push_back(i);
    }
  }
  std::size_t i = free_.back();
  free_.pop_back();
  return i;
}

void LibfabricTransport::send(int peer, Tag tag, const void* buf, std::size_t bytes, std::uint64_t cookie) {
  if (peer < 0 || peer >= size_)
    throw TransportError("libfabric: a send to rank " + std::to_string(peer) + " of " + std::to_string(size_));
  if (bytes > max_message_bytes_)
    throw TransportError("libfabric: a message of " + std::to_string(bytes) + " bytes to rank " + std::to_string(peer) +
                         " is longer than the provider's largest (" + std::to_string(max_message_bytes_) + " bytes)");
  std::size_t i = slot();
  Op& op = ops_[i];
  op.kind = Completion::Kind::send;
  op.cookie = cookie;
  op.peer = peer;
  op.tag = tag;
  op.bytes = bytes;
  op.buf = const_cast<void*>(buf);  // libfabric's send takes void*, and only reads it
  start(i, waiting_sends_);
}

void LibfabricTransport::recv(int peer, Tag tag, void* buf, std::size_t capacity, std::uint64_t cookie) {
  if (peer != kAnySource && (peer < 0 || peer >= size_))
    throw TransportError("libfabric: a receive from rank " + std::to_string(peer) + " of " + std::to_string(size_));
  std::size_t i = slot();
  Op& op = ops_[i];
  op.kind = Completion::Kind::recv;
  op.cookie = cookie;
  op.peer = peer;
  op.tag = tag;
  op.bytes = capacity;
  op.buf = buf;
  start(i, waiting_recvs_);
}

void LibfabricTransport::start(std::size_t i, std::pmr::deque<std::size_t>& waiting) {
  if (closed_) throw TransportError("libfabric: the endpoint of rank " + std::to_string(rank_) + " was closed");
  ++active_;
  if (!waiting.empty() || !post(ops_[i])) {
    ops_[i].state = Op::State::waiting;
    waiting.push_back(i);
  }
}

bool LibfabricTransport::post(Op& op) {
  ssize_t r = 0;
  if (op.kind == Completion::Kind::send) {
    r = fi_tsend(ep_, op.buf, op.bytes, nullptr, addresses_[static_cast<std::size_t>(op.peer)], wire_tag(rank_, op.tag),
                 &op);
  } else {
    const bool any = op.peer == kAnySource;
    // A capacity beyond the provider's largest message is never used: clamped, as some
    // providers refuse the length itself.
    r = fi_trecv(ep_, op.buf, std::min(op.bytes, max_message_bytes_), nullptr, FI_ADDR_UNSPEC,
                 wire_tag(any ? 0 : op.peer, op.tag), any ? any_source_ignore_ : 0, &op);
  }
  if (r == -FI_EAGAIN) return false;
  if (r)
    throw TransportError(
        "libfabric: " + std::string(op.kind == Completion::Kind::send ? "fi_tsend to " : "fi_trecv from ") +
        peer_text(op.peer) + " failed on rank " + std::to_string(rank_) + ": " + error_text(static_cast<int>(r)));
  op.state = Op::State::posted;
  return true;
}

void LibfabricTransport::post_waiting() {
  for (auto* waiting : {&waiting_sends_, &waiting_recvs_})
    while (!waiting->empty() && post(ops_[waiting->front()])) waiting->pop_front();
}

void LibfabricTransport::release(Op& op) {
  op.state = Op::State::free;
  free_.push_back(op.index);
}

bool LibfabricTransport::read_completions(std::vector<Completion>& out) {
  constexpr std::size_t kBatch = 64;
  fi_cq_tagged_entry entries[kBatch];
  bool completed = false;
  for (;;) {
    ssize_t n = fi_cq_read(cq_, entries, kBatch);
    if (n == -FI_EAGAIN) break;
    if (n == -FI_EAVAIL) {
      fi_cq_err_entry err{};
      if (ssize_t r = fi_cq_readerr(cq_, &err, 0); r != 1)
        throw TransportError("libfabric: fi_cq_readerr failed on rank " + std::to_string(rank_) + ": " +
                             error_text(static_cast<int>(r)));
      auto* op = static_cast<Op*>(err.op_context);
      if (op && op->state == Op::State::cancelled) {  // FI_ECANCELED, or whatever ended it
        release(*op);
        continue;
      }
      fail_entry(err);
    }
    if (n < 0)
      throw TransportError("libfabric: fi_cq_read failed on rank " + std::to_string(rank_) + ": " +
                           error_text(static_cast<int>(n)));
    for (ssize_t k = 0; k < n; ++k) {
      auto* op = static_cast<Op*>(entries[k].op_context);
      if (op->state == Op::State::cancelled) {  // matched before its cancel took effect: dropped
        release(*op);
        continue;
      }
      Completion c{op->kind, op->cookie, op->peer, op->tag, op->bytes};
      if (op->kind == Completion::Kind::recv) {
        c.bytes = entries[k].len;
        c.peer = sender_of(entries[k].tag);
      }
      out.push_back(c);
      release(*op);
      --active_;
      completed = true;
    }
    break;  // one batch per call: the caller's list never grows past what it has seen
  }
  return completed;
}

void LibfabricTransport::fail_entry(const fi_cq_err_entry& err) {
  const auto* op = static_cast<const Op*>(err.op_context);
  std::string what = "an operation";
  if (op && op->kind == Completion::Kind::send)
    what = "a send of " + std::to_string(op->bytes) + " bytes to rank " + std::to_string(op->peer) + " (tag " +
           std::to_string(op->tag) + ")";
  else if (op)
    what = "a receive from " + peer_text(op->peer) + " (tag " + std::to_string(op->tag) + ", " +
           std::to_string(op->bytes) + " bytes)";
  if (err.err == FI_ETRUNC && op)
    throw TransportError("libfabric: rank " + std::to_string(rank_) + " got a message from rank " +
                         std::to_string(sender_of(err.tag)) + " on tag " + std::to_string(op->tag) + " of " +
                         std::to_string(op->bytes + err.olen) + " bytes, longer than the receive posted for it (" +
                         std::to_string(op->bytes) + " bytes)");
  char detail[256] = {};
  const char* provider = fi_cq_strerror(cq_, err.prov_errno, err.err_data, detail, sizeof detail);
  throw TransportError("libfabric: " + what + " failed on rank " + std::to_string(rank_) + ": " + error_text(err.err) +
                       " (" + text(provider) + ")");
}

void LibfabricTransport::progress(std::vector<Completion>& out, double timeout_seconds) {
  bool completed = !early_.empty();
  out.insert(out.end(), early_.begin(), early_.end());
  early_.clear();
  // Providers with manual progress (tcp, rxm) move data only inside these calls, so the CQ is
  // read even with nothing posted: a peer's large message needs this side's progress.
  completed = read_completions(out) || completed;
  post_waiting();
  pause_.after_poll(completed, timeout_seconds);
}

void LibfabricTransport::cancel_receives() {
  for (std::size_t i : waiting_recvs_) {
    release(ops_[i]);
    --active_;
  }
  waiting_recvs_.clear();
  std::size_t cancelled = 0;
  for (Op& op : ops_) {
    if (op.state != Op::State::posted || op.kind != Completion::Kind::recv) continue;
    op.state = Op::State::cancelled;  // never counted again, never reused until libfabric says so
    --active_;
    fi_cancel(&ep_->fid, &op);
    ++cancelled;
  }
  // Cancelled receives end with an FI_ECANCELED error entry; collect those (other
  // completions read meanwhile are kept for the next progress()).
  auto unconfirmed = [&] {
    std::size_t n = 0;
    for (const Op& op : ops_) n += op.state == Op::State::cancelled;
    return n;
  };
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (cancelled && unconfirmed() && std::chrono::steady_clock::now() < until) {
    if (!read_completions(early_)) pause_.after_poll(false, 1);
  }
  if (std::size_t left = cancelled ? unconfirmed() : 0) {
    // Their buffers are freed after the run: a late match must find no endpoint to write
    // through. Later operations (a baseline) then fail with a clear error.
    std::fprintf(stderr,
                 "daqnet-evb rank %d: libfabric confirmed %zu of %zu cancelled receives within 5 s; its "
                 "endpoint is closed\n",
                 rank_, cancelled - left, cancelled);
    fi_close(&ep_->fid);
    ep_ = nullptr;
    closed_ = true;
  }
}

}  // namespace daqnet::evb
