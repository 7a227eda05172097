#include "evb/mpi_transport.hpp"

#include <algorithm>
#include <climits>
#include <string>

namespace daqnet::evb {

MpiTransport::MpiTransport(MPI_Comm comm, WaitMode wait) : pause_(wait) {
  check(MPI_Comm_dup(comm, &comm_), "MPI_Comm_dup");
  // Errors come back as codes, so a dead peer becomes a TransportError instead of an abort
  // (where the MPI library can tell at all).
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  // MPI_Testsome has no communicator: its errors go to MPI_COMM_SELF's handler (MPI-4
  // §9.3), fatal by default. A peer's death then aborted this rank inside MPICH ("Fatal
  // error in internal_Testsome") before it could say which transfer failed. It stays so
  // after the transport (MPI_Finalize, the receives cancelled at the end return their
  // errors unseen); the isend baseline calls its communicator's handler itself.
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  // Whether MPI sees a peer on another node (see recv()).
  MPI_Comm node = MPI_COMM_NULL;
  int node_size = size_;
  if (MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
    MPI_Comm_size(node, &node_size);
    MPI_Comm_free(&node);
  }
  int off_node = node_size < size_ ? 1 : 0, any_off_node = 0;
  MPI_Allreduce(&off_node, &any_off_node, 1, MPI_INT, MPI_MAX, comm_);
  probe_any_ = any_off_node != 0;
}

MpiTransport::~MpiTransport() {
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void MpiTransport::check(int err, const char* what) const {
  if (err == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(err, text, &len);
  // MPICH's string is a class then a call stack, one frame a line ("Other MPI error, error
  // stack:\nMPIDI_IPC_rndv_cb(176).: \n...: process_vm_readv failed (errno 3)"): said on
  // one line as the class and the innermost frame's words, which name the cause. (The
  // rank is named by whoever reports the error.)
  std::string all(text, static_cast<std::size_t>(len));
  std::string said = all.substr(0, all.find(", error stack:"));
  if (said.size() < all.size()) {
    std::string last = all.substr(all.find_last_of('\n') + 1);
    if (auto colon = last.find(": "); colon != std::string::npos) last = last.substr(colon + 2);
    if (!last.empty()) said += ": " + last;
  }
  throw TransportError(std::string("mpi: ") + what + " failed: " + said);
}

std::size_t MpiTransport::slot() {
  if (!free_.empty()) {
    std::size_t i = free_.back();
    free_.pop_back();
    return i;
  }
  requests_.push_back(MPI_REQUEST_NULL);
  ops_.push_back({});
  return requests_.size() - 1;
}

void MpiTransport::send(int peer, Tag tag, const void* buf, std::size_t bytes, std::uint64_t cookie) {
  if (bytes > static_cast<std::size_t>(INT_MAX))
    throw TransportError("mpi: message of " + std::to_string(bytes) + " bytes is too long");
  std::size_t i = slot();
  ops_[i] = {Completion::Kind::send, cookie, peer, tag, bytes};
  check(MPI_Isend(buf, static_cast<int>(bytes), MPI_BYTE, peer, static_cast<int>(tag), comm_, &requests_[i]),
        "MPI_Isend");
  ++active_;
}

void MpiTransport::recv(int peer, Tag tag, void* buf, std::size_t capacity, std::uint64_t cookie) {
  int count = static_cast<int>(std::min<std::size_t>(capacity, INT_MAX));
  std::size_t i = slot();
  ops_[i] = {Completion::Kind::recv, cookie, peer, tag, capacity};
  if (peer == kAnySource && probe_any_) {
    ++active_;
    // Not MPI_Irecv(MPI_ANY_SOURCE) when a peer is on another node: under MPICH's UCX netmod
    // (the mpich wheel's default) one never completes for a message from another node that
    // arrived before it was posted (the message is taken, the request stays pending). It
    // struck one node under srun --distribution=arbitrary, where Slurm's PMI-2 tells MPICH
    // every task is on a node of its own. MPI_Improbe + MPI_Imrecv match the same messages,
    // in the same order. (All on one node, MPI_Irecv: with the probes there, a Ctrl-C
    // crashed a rank in MPICH's shared-memory large-message path, 3 runs of 10 interrupts
    // in 3, where MPI_Irecv had none in 30.)
    auto it = std::find_if(any_.begin(), any_.end(), [&](const auto& q) { return q.first == tag; });
    if (it == any_.end()) it = any_.insert(any_.end(), {tag, {}});
    // Room for as many as there are operation slots, which stop growing once the run is under
    // way: a queue growing past its earlier peak after the warm-up allocated (PULL, rank 0).
    if (it->second.capacity() < requests_.capacity()) it->second.reserve(requests_.capacity());
    it->second.push_back({buf, count, i});
    match_any_source();
    return;
  }
  check(MPI_Irecv(buf, count, MPI_BYTE, peer == kAnySource ? MPI_ANY_SOURCE : peer, static_cast<int>(tag), comm_,
                  &requests_[i]),
        "MPI_Irecv");
  ++active_;
}

void MpiTransport::match_any_source() {
  for (auto& [tag, waiting] : any_) {
    while (!waiting.empty()) {
      int found = 0;
      MPI_Message message = MPI_MESSAGE_NULL;
      MPI_Status status;
      check(MPI_Improbe(MPI_ANY_SOURCE, static_cast<int>(tag), comm_, &found, &message, &status), "MPI_Improbe");
      if (!found) break;
      const AnyReceive r = waiting.front();
      waiting.erase(waiting.begin());  // a few entries (the posted command receives)
      check(MPI_Imrecv(r.buf, r.count, MPI_BYTE, &message, &requests_[r.slot]), "MPI_Imrecv");
      ops_[r.slot].matched = true;
    }
  }
}

void MpiTransport::progress(std::vector<Completion>& out, double timeout_seconds) {
  if (requests_.empty()) return;
  if (probe_any_) match_any_source();
  indices_.resize(requests_.size());
  statuses_.resize(requests_.size());
  int done = 0;
  int err =
      MPI_Testsome(static_cast<int>(requests_.size()), requests_.data(), &done, indices_.data(), statuses_.data());
  if (err == MPI_ERR_IN_STATUS) {
    for (int k = 0; k < done; ++k) {
      if (statuses_[k].MPI_ERROR == MPI_SUCCESS) continue;
      // Named by its peer: a dead rank shows first as its peers' failed transfers.
      const Op& op = ops_[static_cast<std::size_t>(indices_[k])];
      const int peer = op.peer == kAnySource ? statuses_[k].MPI_SOURCE : op.peer;
      std::string what = op.kind == Completion::Kind::send ? "a send to rank " : "a receive from rank ";
      what += peer >= 0 ? std::to_string(peer) : std::string("any");
      check(statuses_[k].MPI_ERROR, what.c_str());
    }
  }
  check(err, "MPI_Testsome");
  if (done == MPI_UNDEFINED) done = 0;
  for (int k = 0; k < done; ++k) {
    auto i = static_cast<std::size_t>(indices_[k]);
    const Op& op = ops_[i];
    Completion c{op.kind, op.cookie, op.peer, op.tag, op.bytes};
    if (op.kind == Completion::Kind::recv) {
      int count = 0;
      MPI_Get_count(&statuses_[k], MPI_BYTE, &count);
      c.bytes = static_cast<std::size_t>(count);
      c.peer = statuses_[k].MPI_SOURCE;
    }
    out.push_back(c);
    free_.push_back(i);
    --active_;
  }
  // MPI only moves data inside MPI calls, so an idle rank polls again after a pause.
  pause_.after_poll(done > 0, timeout_seconds);
}

void MpiTransport::cancel_receives() {
  for (auto& [tag, waiting] : any_) {  // never given to MPI: nothing to cancel there
    for (const AnyReceive& r : waiting) {
      free_.push_back(r.slot);
      --active_;
    }
    waiting.clear();
  }
  for (std::size_t i = 0; i < requests_.size(); ++i) {
    if (requests_[i] == MPI_REQUEST_NULL || ops_[i].kind != Completion::Kind::recv) continue;
    // A receive of a message already matched (MPI_Imrecv) cannot be cancelled: its message
    // is here or on its way, so it completes.
    if (!ops_[i].matched) MPI_Cancel(&requests_[i]);
    MPI_Wait(&requests_[i], MPI_STATUS_IGNORE);
    free_.push_back(i);
    --active_;
  }
}

}  // namespace daqnet::evb
