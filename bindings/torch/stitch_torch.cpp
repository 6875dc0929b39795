/* stitch_torch.cpp - a torch.distributed backend named "stitch": a c10d::ProcessGroup whose collectives are
 * libstitch's, for CPU tensors (PyTorch 1.13, Debian's python3-torch and libtorch-dev).
 *
 * This is the extension module stitch_torch._backend; the package stitch_torch (stitch_torch/__init__.py)
 * registers the backend with torch.distributed.Backend.register_backend when imported, and maps new_group onto
 * stitch_comm_split. `torch.distributed.init_process_group("stitch")` under torchrun (or any init_method) makes a
 * group. There is no second launcher: PyTorch hands the creator function its own Store (a PrefixStore per group),
 * rank 0 draws a stitch unique id (stitch_get_unique_id: its host:port and 128 random bits) and publishes it with
 * store.set, the others read it with store.get (which blocks until it is there), and every rank calls
 * stitch_comm_init_rank. A group made by new_group while the default group is stitch's is instead split from the
 * default group's communicator (split() below, called by every rank of the default group from __init__.py; adopt()
 * makes the group of the new communicator), so it inherits its settings and transports without a rendezvous.
 *
 * Collectives: allreduce, broadcast, reduce, allgather (list form and _allgather_base / all_gather_into_tensor),
 * reduce_scatter (list form and _reduce_scatter_base / reduce_scatter_tensor), alltoall_base (all_to_all_single:
 * equal splits -> stitch_all_to_all, split sizes -> stitch_all_to_all_v), alltoall (list form, by all_to_all_v),
 * gather, scatter, barrier (stitch_barrier). Point-to-point: send and recv (stitch_send, stitch_recv; tag 0 only,
 * stitch matches a pair's messages in order; no receive from any source).
 * One tensor per call (one CPU device per process), contiguous, of a dtype stitch has: int8, uint8, int16, int32,
 * int64, float16, bfloat16, float32, float64. Ops SUM, PRODUCT, MIN, MAX; stitch has no AVG, and AVG, the bitwise
 * ops and PREMUL_SUM are refused. Anything else (a CUDA or sparse tensor, a non-contiguous one, bool, complex, a
 * list of two tensors) raises RuntimeError naming the call and what is wrong, before any rank communicates.
 *
 * Errors. A failing stitch call raises RuntimeError with "stitch <collective>: <stitch_strerror>: <the
 * communicator's last error>"; after a failure inside a collective libstitch has aborted the communicator (its
 * peers fail too, with this rank's message), and every later call on the group raises.
 *
 * Work objects. Every collective runs to completion on the calling thread before it returns (first version: no
 * worker thread), so the Work it returns is already complete and its future (which DistributedDataParallel's
 * reducer waits on) already holds the output tensors. async_op=True is accepted and gains nothing. A mutex keeps
 * two threads from being inside the communicator at once (libstitch allows one thread per communicator).
 *
 * Timeouts: the group's timeout (init_process_group(timeout=...), 30 min by default) becomes the communicator's
 * per-collective timeout; a per-call opts.timeout is not used. A split communicator keeps its parent's timeout,
 * so __init__.py splits only for a new_group whose timeout is the default group's (otherwise: a rendezvous).
 */
#include <torch/extension.h>

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/Types.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <pybind11/chrono.h>

#include <chrono>
#include <climits>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "stitch.h"

namespace {

// The key under the group's PrefixStore where rank 0 publishes the unique id.
const char *const kIdKey = "stitch_unique_id";

// A Work that is complete when made: the collective already ran on the calling thread.
class DoneWork : public c10d::Work {
  public:
    DoneWork(c10d::OpType type, std::vector<at::Tensor> outputs)
        : c10d::Work(-1, type), outputs_(std::move(outputs)),
          future_(c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get())))
    {
        future_->markCompleted(c10::IValue(outputs_));
    }
    bool isCompleted() override { return true; }
    bool isSuccess() const override { return true; }
    bool wait(std::chrono::milliseconds) override { return true; }
    std::vector<at::Tensor> result() override { return outputs_; }
    c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }

  private:
    std::vector<at::Tensor> outputs_;
    c10::intrusive_ptr<c10::ivalue::Future> future_;
};

stitch_dtype_t to_stitch_dtype(const at::Tensor &t, const char *call)
{
    switch (t.scalar_type()) {
    case at::kChar: return STITCH_INT8;
    case at::kByte: return STITCH_UINT8;
    case at::kShort: return STITCH_INT16;
    case at::kInt: return STITCH_INT32;
    case at::kLong: return STITCH_INT64;
    case at::kHalf: return STITCH_FP16;
    case at::kBFloat16: return STITCH_BF16;
    case at::kFloat: return STITCH_FP32;
    case at::kDouble: return STITCH_FP64;
    default:
        TORCH_CHECK(false, "stitch ", call, ": dtype ", t.scalar_type(),
                    " is not supported (stitch has int8, uint8, int16, int32, int64, float16, bfloat16, float32, "
                    "float64)");
    }
}

stitch_op_t to_stitch_op(const c10d::ReduceOp &op, const char *call)
{
    switch (op.op_) {
    case c10d::ReduceOp::SUM: return STITCH_SUM;
    case c10d::ReduceOp::PRODUCT: return STITCH_PROD;
    case c10d::ReduceOp::MIN: return STITCH_MIN;
    case c10d::ReduceOp::MAX: return STITCH_MAX;
    default:
        TORCH_CHECK(false, "stitch ", call, ": reduce op ", static_cast<int>(op.op_),
                    " is not supported (stitch has SUM, PRODUCT, MIN, MAX; no AVG, bitwise ops or PREMUL_SUM)");
    }
}

// Every tensor stitch reads or writes: dense, on the CPU, contiguous, and of a dtype stitch has.
stitch_dtype_t check_tensor(const at::Tensor &t, const char *call)
{
    TORCH_CHECK(t.device().is_cpu(), "stitch ", call, ": tensor is on ", t.device(), "; stitch takes CPU tensors");
    TORCH_CHECK(t.layout() == at::kStrided, "stitch ", call, ": tensor layout ", t.layout(),
                " is not supported (dense tensors only)");
    TORCH_CHECK(t.is_contiguous(), "stitch ", call, ": tensor is not contiguous (call .contiguous() first)");
    return to_stitch_dtype(t, call);
}

const at::Tensor &single(const std::vector<at::Tensor> &ts, const char *call)
{
    TORCH_CHECK(ts.size() == 1, "stitch ", call, ": expected one tensor per process, got ", ts.size());
    return ts[0];
}

void check_same(const at::Tensor &a, const at::Tensor &b, const char *call, const char *what)
{
    TORCH_CHECK(a.scalar_type() == b.scalar_type(), "stitch ", call, ": ", what, " has dtype ", b.scalar_type(),
                ", the input ", a.scalar_type());
}

class ProcessGroupStitch : public c10d::ProcessGroup {
  public:
    ProcessGroupStitch(const c10::intrusive_ptr<c10d::Store> &store, int rank, int size,
                       std::chrono::milliseconds timeout)
        : c10d::ProcessGroup(rank, size), timeout_ms_(timeout.count())
    {
        stitch_unique_id_t id;
        static_assert(sizeof id.internal == 128, "stitch_unique_id_t changed size");
        if (rank == 0) {
            stitch_status_t st = stitch_get_unique_id(&id);
            TORCH_CHECK(st == STITCH_OK, "stitch init: stitch_get_unique_id failed: ", stitch_strerror(st));
            store->set(kIdKey, std::vector<uint8_t>(id.internal, id.internal + sizeof id.internal));
        } else {
            std::vector<uint8_t> got = store->get(kIdKey);
            TORCH_CHECK(got.size() == sizeof id.internal, "stitch init: the store's ", kIdKey, " has ", got.size(),
                        " bytes, expected ", sizeof id.internal);
            std::memcpy(id.internal, got.data(), sizeof id.internal);
        }
        stitch_config_t config = STITCH_CONFIG_INIT;
        long long ms = timeout.count();
        config.timeout_ms = ms <= 0 || ms > INT_MAX ? -1 : static_cast<int>(ms);
        char err[512] = "";
        stitch_status_t st = stitch_comm_init_rank(&comm_, size, id, rank, &config, err, sizeof err);
        TORCH_CHECK(st == STITCH_OK, "stitch init (rank ", rank, " of ", size, "): ", stitch_strerror(st), ": ", err);
    }

    // A group over a communicator that stitch_comm_split made (ownership passes to the group).
    ProcessGroupStitch(stitch_comm_t *comm, long long timeout_ms)
        : c10d::ProcessGroup(stitch_comm_rank(comm), stitch_comm_size(comm)), timeout_ms_(timeout_ms), split_(true),
          comm_(comm)
    {
    }

    long long timeout_ms() const { return timeout_ms_; }
    bool made_by_split() const { return split_; }

    // stitch_comm_split on this group's communicator: collective over the group. NULL for a negative color.
    stitch_comm_t *split(int color, int key)
    {
        stitch_comm_t *out = nullptr;
        call("new_group (stitch_comm_split)", [&] { return stitch_comm_split(comm_, color, key, &out); });
        return out;
    }

    ~ProcessGroupStitch() override
    {
        if (comm_)
            stitch_comm_destroy(comm_);
    }

    const std::string getBackendName() const override { return "stitch"; }

    c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor> &tensors,
                                             const c10d::AllreduceOptions &opts) override
    {
        const at::Tensor &t = single(tensors, "all_reduce");
        stitch_dtype_t dt = check_tensor(t, "all_reduce");
        stitch_op_t op = to_stitch_op(opts.reduceOp, "all_reduce");
        call("all_reduce", [&] { return stitch_all_reduce(t.data_ptr(), t.data_ptr(), t.numel(), dt, op, comm_); });
        return done(c10d::OpType::ALLREDUCE, tensors);
    }

    c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor> &tensors,
                                             const c10d::BroadcastOptions &opts) override
    {
        const at::Tensor &t = single(tensors, "broadcast");
        stitch_dtype_t dt = check_tensor(t, "broadcast");
        int root = root_of(opts.rootRank, "broadcast");
        void *send = root == rank_ ? t.data_ptr() : nullptr;
        call("broadcast", [&] { return stitch_broadcast(send, t.data_ptr(), t.numel(), dt, root, comm_); });
        return done(c10d::OpType::BROADCAST, tensors);
    }

    c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor> &tensors, const c10d::ReduceOptions &opts) override
    {
        const at::Tensor &t = single(tensors, "reduce");
        stitch_dtype_t dt = check_tensor(t, "reduce");
        stitch_op_t op = to_stitch_op(opts.reduceOp, "reduce");
        int root = root_of(opts.rootRank, "reduce");
        void *recv = root == rank_ ? t.data_ptr() : nullptr;
        call("reduce", [&] { return stitch_reduce(t.data_ptr(), recv, t.numel(), dt, op, root, comm_); });
        return done(c10d::OpType::REDUCE, tensors);
    }

    // List form: output[0][i] gets rank i's input. Gathered into one buffer, then copied out.
    c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>> &outputs,
                                             std::vector<at::Tensor> &inputs,
                                             const c10d::AllgatherOptions &opts) override
    {
        const at::Tensor &in = single(inputs, "all_gather");
        stitch_dtype_t dt = check_tensor(in, "all_gather");
        TORCH_CHECK(outputs.size() == 1, "stitch all_gather: expected one output list, got ", outputs.size());
        std::vector<at::Tensor> &outs = outputs[0];
        check_list(outs, in, "all_gather", "output");
        at::Tensor flat = at::empty({size_ * in.numel()}, in.options());
        call("all_gather", [&] { return stitch_all_gather(in.data_ptr(), flat.data_ptr(), in.numel(), dt, comm_); });
        for (int i = 0; i < size_; i++)
            outs[i].view(-1).copy_(flat.narrow(0, i * in.numel(), in.numel()));
        return done(c10d::OpType::ALLGATHER, outs);
    }

    c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor &out, at::Tensor &in,
                                                   const c10d::AllgatherOptions &opts) override
    {
        stitch_dtype_t dt = check_tensor(in, "all_gather_into_tensor");
        check_tensor(out, "all_gather_into_tensor");
        check_same(in, out, "all_gather_into_tensor", "the output");
        TORCH_CHECK(out.numel() == size_ * in.numel(), "stitch all_gather_into_tensor: output has ", out.numel(),
                    " elements, expected ", size_, " x ", in.numel());
        call("all_gather_into_tensor",
             [&] { return stitch_all_gather(in.data_ptr(), out.data_ptr(), in.numel(), dt, comm_); });
        return done(c10d::OpType::_ALLGATHER_BASE, {out});
    }

    // List form: inputs[0][i] is this rank's contribution to rank i. Packed into one buffer first.
    c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor> &outputs,
                                                  std::vector<std::vector<at::Tensor>> &inputs,
                                                  const c10d::ReduceScatterOptions &opts) override
    {
        const at::Tensor &out = single(outputs, "reduce_scatter");
        stitch_dtype_t dt = check_tensor(out, "reduce_scatter");
        stitch_op_t op = to_stitch_op(opts.reduceOp, "reduce_scatter");
        TORCH_CHECK(inputs.size() == 1, "stitch reduce_scatter: expected one input list, got ", inputs.size());
        check_list(inputs[0], out, "reduce_scatter", "input");
        at::Tensor flat = pack(inputs[0]);
        call("reduce_scatter",
             [&] { return stitch_reduce_scatter(flat.data_ptr(), out.data_ptr(), out.numel(), dt, op, comm_); });
        return done(c10d::OpType::REDUCE_SCATTER, outputs);
    }

    c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(at::Tensor &out, at::Tensor &in,
                                                        const c10d::ReduceScatterOptions &opts) override
    {
        stitch_dtype_t dt = check_tensor(out, "reduce_scatter_tensor");
        check_tensor(in, "reduce_scatter_tensor");
        check_same(out, in, "reduce_scatter_tensor", "the input");
        stitch_op_t op = to_stitch_op(opts.reduceOp, "reduce_scatter_tensor");
        TORCH_CHECK(in.numel() == size_ * out.numel(), "stitch reduce_scatter_tensor: input has ", in.numel(),
                    " elements, expected ", size_, " x ", out.numel());
        call("reduce_scatter_tensor",
             [&] { return stitch_reduce_scatter(in.data_ptr(), out.data_ptr(), out.numel(), dt, op, comm_); });
        return done(c10d::OpType::_REDUCE_SCATTER_BASE, {out});
    }

    // all_to_all_single: equal splits (both lists empty) are stitch_all_to_all; split sizes, counted in rows of
    // dimension 0, become element counts and displacements for stitch_all_to_all_v.
    c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor &out, at::Tensor &in, std::vector<int64_t> &out_splits,
                                                 std::vector<int64_t> &in_splits,
                                                 const c10d::AllToAllOptions &opts) override
    {
        const char *call_name = "all_to_all_single";
        stitch_dtype_t dt = check_tensor(in, call_name);
        check_tensor(out, call_name);
        check_same(in, out, call_name, "the output");
        if (out_splits.empty() && in_splits.empty()) {
            TORCH_CHECK(in.numel() == out.numel() && in.numel() % size_ == 0, "stitch ", call_name,
                        ": equal splits need input and output of the same size, divisible by ", size_, " (got ",
                        in.numel(), " and ", out.numel(), ")");
            call(call_name,
                 [&] { return stitch_all_to_all(in.data_ptr(), out.data_ptr(), in.numel() / size_, dt, comm_); });
        } else {
            std::vector<size_t> sc, sd, rc, rd;
            splits(in, in_splits, sc, sd, "input");
            splits(out, out_splits, rc, rd, "output");
            call(call_name, [&] {
                return stitch_all_to_all_v(in.data_ptr(), sc.data(), sd.data(), out.data_ptr(), rc.data(), rd.data(),
                                           dt, comm_);
            });
        }
        return done(c10d::OpType::ALLTOALL_BASE, {out});
    }

    // List form: inputs[j] goes to rank j, outputs[i] comes from rank i; sizes may differ (all_to_all_v).
    c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor> &outputs, std::vector<at::Tensor> &inputs,
                                            const c10d::AllToAllOptions &opts) override
    {
        TORCH_CHECK(inputs.size() == static_cast<size_t>(size_) && outputs.size() == static_cast<size_t>(size_),
                    "stitch all_to_all: expected ", size_, " input and output tensors, got ", inputs.size(), " and ",
                    outputs.size());
        stitch_dtype_t dt = check_tensor(inputs[0], "all_to_all");
        std::vector<size_t> sc(size_), sd(size_), rc(size_), rd(size_);
        size_t s_total = 0, r_total = 0;
        for (int i = 0; i < size_; i++) {
            check_tensor(inputs[i], "all_to_all");
            check_tensor(outputs[i], "all_to_all");
            check_same(inputs[0], inputs[i], "all_to_all", "an input");
            check_same(inputs[0], outputs[i], "all_to_all", "an output");
            sd[i] = s_total, sc[i] = inputs[i].numel(), s_total += sc[i];
            rd[i] = r_total, rc[i] = outputs[i].numel(), r_total += rc[i];
        }
        at::Tensor send = pack(inputs);
        at::Tensor recv = at::empty({static_cast<int64_t>(r_total)}, inputs[0].options());
        call("all_to_all", [&] {
            return stitch_all_to_all_v(send.data_ptr(), sc.data(), sd.data(), recv.data_ptr(), rc.data(), rd.data(),
                                       dt, comm_);
        });
        for (int i = 0; i < size_; i++)
            outputs[i].view(-1).copy_(recv.narrow(0, rd[i], rc[i]));
        return done(c10d::OpType::ALLTOALL, outputs);
    }

    c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>> &outputs,
                                          std::vector<at::Tensor> &inputs, const c10d::GatherOptions &opts) override
    {
        const at::Tensor &in = single(inputs, "gather");
        stitch_dtype_t dt = check_tensor(in, "gather");
        int root = root_of(opts.rootRank, "gather");
        at::Tensor flat;
        if (rank_ == root) {
            TORCH_CHECK(outputs.size() == 1, "stitch gather: expected one output list at the root, got ",
                        outputs.size());
            check_list(outputs[0], in, "gather", "output");
            flat = at::empty({size_ * in.numel()}, in.options());
        } else {
            TORCH_CHECK(outputs.empty(), "stitch gather: only the root passes an output list");
        }
        void *recv = rank_ == root ? flat.data_ptr() : nullptr;
        call("gather", [&] { return stitch_gather(in.data_ptr(), recv, in.numel(), dt, root, comm_); });
        if (rank_ != root)
            return done(c10d::OpType::GATHER, {});
        for (int i = 0; i < size_; i++)
            outputs[0][i].view(-1).copy_(flat.narrow(0, i * in.numel(), in.numel()));
        return done(c10d::OpType::GATHER, outputs[0]);
    }

    c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor> &outputs,
                                           std::vector<std::vector<at::Tensor>> &inputs,
                                           const c10d::ScatterOptions &opts) override
    {
        const at::Tensor &out = single(outputs, "scatter");
        stitch_dtype_t dt = check_tensor(out, "scatter");
        int root = root_of(opts.rootRank, "scatter");
        at::Tensor flat;
        if (rank_ == root) {
            TORCH_CHECK(inputs.size() == 1, "stitch scatter: expected one input list at the root, got ",
                        inputs.size());
            check_list(inputs[0], out, "scatter", "input");
            flat = pack(inputs[0]);
        } else {
            TORCH_CHECK(inputs.empty(), "stitch scatter: only the root passes an input list");
        }
        void *send = rank_ == root ? flat.data_ptr() : nullptr;
        call("scatter", [&] { return stitch_scatter(send, out.data_ptr(), out.numel(), dt, root, comm_); });
        return done(c10d::OpType::SCATTER, outputs);
    }

    c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions &opts) override
    {
        call("barrier", [&] { return stitch_barrier(comm_); });
        return done(c10d::OpType::BARRIER, {});
    }

    // Blocking, like torch.distributed.send: returns once stitch_send has (stitch.h: the receiver copied the data,
    // or the transport took it). Two ranks that both send before receiving may wait for each other until the timeout.
    c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor> &tensors, int dst, int tag) override
    {
        const at::Tensor &t = single(tensors, "send");
        stitch_dtype_t dt = check_tensor(t, "send");
        check_peer(dst, tag, "send", "destination");
        call("send", [&] { return stitch_send(t.data_ptr(), t.numel(), dt, dst, comm_); });
        return done(c10d::OpType::SEND, tensors);
    }

    c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor> &tensors, int src, int tag) override
    {
        const at::Tensor &t = single(tensors, "recv");
        stitch_dtype_t dt = check_tensor(t, "recv");
        check_peer(src, tag, "recv", "source");
        call("recv", [&] { return stitch_recv(t.data_ptr(), t.numel(), dt, src, comm_); });
        return done(c10d::OpType::RECV, tensors);
    }

    c10::intrusive_ptr<c10d::Work> recvAnysource(std::vector<at::Tensor> &tensors, int tag) override
    {
        TORCH_CHECK(false, "stitch recv: a source rank is needed (stitch has no receive from any source)");
    }

  private:
    // Runs one stitch call under the mutex (libstitch takes one thread per communicator at a time) and turns its
    // failure into an exception carrying stitch's message.
    template <class F> void call(const char *name, F &&run)
    {
        stitch_status_t st;
        {
            std::lock_guard<std::mutex> lock(mu_);
            st = run();
        }
        if (st != STITCH_OK)
            TORCH_CHECK(false, "stitch ", name, ": ", stitch_strerror(st), ": ", stitch_comm_last_error(comm_));
    }

    c10::intrusive_ptr<c10d::Work> done(c10d::OpType type, std::vector<at::Tensor> outputs)
    {
        return c10::make_intrusive<DoneWork>(type, std::move(outputs));
    }

    int root_of(int64_t root, const char *call)
    {
        TORCH_CHECK(root >= 0 && root < size_, "stitch ", call, ": root ", root,
                    " is not a rank of this group (size ", size_, ")");
        return static_cast<int>(root);
    }

    // A peer of send/recv: another rank of the group (a send to oneself outside a group could never complete, and
    // torch's send/recv issue no group), with tag 0: stitch matches a pair's messages in the order issued.
    void check_peer(int peer, int tag, const char *call, const char *what)
    {
        TORCH_CHECK(peer >= 0 && peer < size_, "stitch ", call, ": ", what, " ", peer,
                    " is not a rank of this group (size ", size_, ")");
        TORCH_CHECK(peer != rank_, "stitch ", call, ": ", what, " ", peer,
                    " is this rank (a blocking send or receive to oneself cannot complete)");
        TORCH_CHECK(tag == 0, "stitch ", call, ": tag ", tag,
                    " is not supported (stitch matches a pair's messages in the order issued; use tag 0)");
    }

    // A list of size_ tensors, each of the reference's dtype and element count.
    void check_list(const std::vector<at::Tensor> &ts, const at::Tensor &ref, const char *call, const char *what)
    {
        TORCH_CHECK(ts.size() == static_cast<size_t>(size_), "stitch ", call, ": expected ", size_, " ", what,
                    " tensors, got ", ts.size());
        for (const at::Tensor &t : ts) {
            check_tensor(t, call);
            check_same(ref, t, call, what);
            TORCH_CHECK(t.numel() == ref.numel(), "stitch ", call, ": an ", what, " tensor has ", t.numel(),
                        " elements, expected ", ref.numel());
        }
    }

    static at::Tensor pack(const std::vector<at::Tensor> &ts)
    {
        std::vector<at::Tensor> flat;
        for (const at::Tensor &t : ts)
            flat.push_back(t.reshape(-1));
        return at::cat(flat);
    }

    // Split sizes in rows of dimension 0 -> element counts and displacements; empty: equal rows per rank.
    void splits(const at::Tensor &t, const std::vector<int64_t> &rows, std::vector<size_t> &counts,
                std::vector<size_t> &displs, const char *what)
    {
        int64_t dim0 = t.dim() ? t.size(0) : 1;
        int64_t row = dim0 ? t.numel() / dim0 : 0;
        counts.assign(size_, 0), displs.assign(size_, 0);
        if (rows.empty()) {
            TORCH_CHECK(dim0 % size_ == 0, "stitch all_to_all_single: ", what, " dimension 0 (", dim0,
                        ") is not divisible by ", size_, " and no split sizes were given");
        } else {
            TORCH_CHECK(rows.size() == static_cast<size_t>(size_), "stitch all_to_all_single: ", rows.size(), " ",
                        what, " split sizes for ", size_, " ranks");
        }
        int64_t at = 0;
        for (int i = 0; i < size_; i++) {
            int64_t r = rows.empty() ? dim0 / size_ : rows[i];
            TORCH_CHECK(r >= 0, "stitch all_to_all_single: negative ", what, " split size ", r);
            displs[i] = static_cast<size_t>(at * row), counts[i] = static_cast<size_t>(r * row), at += r;
        }
        TORCH_CHECK(at == dim0, "stitch all_to_all_single: ", what, " split sizes add up to ", at,
                    " rows, the tensor has ", dim0);
    }

    long long timeout_ms_;
    bool split_ = false;
    stitch_comm_t *comm_ = nullptr;
    std::mutex mu_;
};

// The communicator stitch_comm_split made for a group being created, between split() and adopt() (__init__.py);
// destroyed here if no group adopts it (new_group failed in between). Empty for a rank outside the new group.
class SplitComm {
  public:
    SplitComm(stitch_comm_t *comm, long long timeout_ms) : comm_(comm), timeout_ms_(timeout_ms) {}
    SplitComm(const SplitComm &) = delete;
    SplitComm &operator=(const SplitComm &) = delete;
    ~SplitComm()
    {
        if (comm_)
            stitch_comm_destroy(comm_);
    }
    bool empty() const { return comm_ == nullptr; }
    stitch_comm_t *take()
    {
        stitch_comm_t *c = comm_;
        comm_ = nullptr;
        return c;
    }
    long long timeout_ms() const { return timeout_ms_; }

  private:
    stitch_comm_t *comm_;
    long long timeout_ms_;
};

// The stitch group behind a ProcessGroup handle, or NULL when it is another backend's.
ProcessGroupStitch *as_stitch(const c10::intrusive_ptr<c10d::ProcessGroup> &pg)
{
    return dynamic_cast<ProcessGroupStitch *>(pg.get());
}

ProcessGroupStitch &stitch_group(const c10::intrusive_ptr<c10d::ProcessGroup> &pg, const char *call)
{
    ProcessGroupStitch *s = as_stitch(pg);
    TORCH_CHECK(s, "stitch_torch.", call, ": the group's backend is ", pg->getBackendName(), ", not stitch");
    return *s;
}

// A group for the communicator of a split: its rank and size must be the ones torch computed for the group.
c10::intrusive_ptr<c10d::ProcessGroup> adopt(SplitComm &split, int rank, int size)
{
    TORCH_CHECK(!split.empty(), "stitch new_group: no communicator to adopt (this rank is not in the group)");
    stitch_comm_t *comm = split.take();
    int r = stitch_comm_rank(comm), n = stitch_comm_size(comm);
    if (r != rank || n != size) {
        stitch_comm_destroy(comm);
        TORCH_CHECK(false, "stitch new_group: stitch_comm_split made rank ", r, " of ", n, ", torch expects rank ",
                    rank, " of ", size);
    }
    return c10::make_intrusive<ProcessGroupStitch>(comm, split.timeout_ms());
}

// torch.distributed calls this with (store, rank, world_size, timeout) when a group asks for backend "stitch".
c10::intrusive_ptr<c10d::ProcessGroup> create(const c10::intrusive_ptr<c10d::Store> &store, int rank, int size,
                                              const std::chrono::duration<float> &timeout)
{
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(timeout);
    return c10::make_intrusive<ProcessGroupStitch>(store, rank, size, ms);
}

} // namespace

PYBIND11_MODULE(_backend, m)
{
    m.doc() = "torch.distributed backend 'stitch' (libstitch collectives on CPU tensors): the C++ side of the "
              "package stitch_torch, whose import registers it";
    m.def("create_process_group", &create, py::arg("store"), py::arg("rank"), py::arg("size"), py::arg("timeout"),
          "a group with a communicator of its own, by a rendezvous through the store");
    py::class_<SplitComm>(m, "SplitComm").def_property_readonly("empty", &SplitComm::empty);
    m.def(
        "split",
        [](const c10::intrusive_ptr<c10d::ProcessGroup> &pg, int color, int key) {
            ProcessGroupStitch &g = stitch_group(pg, "split");
            return std::make_unique<SplitComm>(g.split(color, key), g.timeout_ms());
        },
        py::arg("group"), py::arg("color"), py::arg("key"),
        "stitch_comm_split on a stitch group's communicator (collective over it); empty for a negative color");
    m.def("adopt", &adopt, py::arg("split"), py::arg("rank"), py::arg("size"),
          "the group of a communicator split() made; the SplitComm is empty afterwards");
    m.def(
        "is_stitch", [](const c10::intrusive_ptr<c10d::ProcessGroup> &pg) { return as_stitch(pg) != nullptr; },
        py::arg("group"));
    m.def(
        "timeout_ms", [](const c10::intrusive_ptr<c10d::ProcessGroup> &pg) {
            return stitch_group(pg, "timeout_ms").timeout_ms();
        },
        py::arg("group"), "the group's timeout in milliseconds, as torch gave it");
    m.def(
        "made_by_split", [](const c10::intrusive_ptr<c10d::ProcessGroup> &pg) {
            return stitch_group(pg, "made_by_split").made_by_split();
        },
        py::arg("group"), "whether the group's communicator came from stitch_comm_split (else a rendezvous)");
}
