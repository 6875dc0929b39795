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
 * gather, scatter, barrier (stitch_ibarrier). Point-to-point: send and recv, isend and irecv (stitch_isend,
 * stitch_irecv; tag 0 only, stitch matches a pair's messages in order; no receive from any source).
 * One tensor per call (one CPU device per process), contiguous, of a dtype stitch has: int8, uint8, int16, int32,
 * int64, float16, bfloat16, float32, float64. Ops SUM, PRODUCT, MIN, MAX; stitch has no AVG, and AVG, the bitwise
 * ops and PREMUL_SUM are refused. Anything else (a CUDA or sparse tensor, a non-contiguous one, bool, complex, a
 * list of two tensors) raises RuntimeError naming the call and what is wrong, before any rank communicates.
 *
 * Errors. A failing stitch call raises RuntimeError with "stitch <collective>: <stitch_strerror>: <the
 * communicator's last error>"; after a failure inside a collective libstitch has aborted the communicator (its
 * peers fail too, with this rank's message), and every later call on the group raises.
 *
 * Work objects. Every call is issued with libstitch's non-blocking form (stitch_iall_reduce, ..., stitch_ibarrier,
 * stitch_isend, stitch_irecv) and returns at once a StitchWork over its request: async_op=True overlaps the call with
 * whatever the caller does next (the communicator's progress thread moves the data), and a blocking call is torch's
 * wait() on that Work. wait() waits for the request and raises its failure; isCompleted() tests it without
 * blocking; the future (which DistributedDataParallel's reducer chains its bucket callbacks on) completes with the
 * output tensors or the error. A list-form call (all_gather, gather into a list) copies its flat result into the
 * caller's tensors when its request completes, before the Work or its future says complete. Each group has a
 * completer thread that settles its Works in issue order (so futures complete, and requests are freed, with no
 * wait() from anyone); whichever thread first sees a request done (the completer, wait(), isCompleted())
 * settles its Work: copies the outputs, completes the future, wakes the waiters. Point-to-point requests may
 * complete out of issue order (an irecv still waiting for its sender does not hold up a later isend's wait()); their
 * futures complete in issue order. A mutex keeps two threads from issuing on the communicator at once (libstitch
 * allows one thread per communicator); any thread may wait.
 *
 * Timeouts: the group's timeout (init_process_group(timeout=...), 30 min by default) becomes the communicator's
 * timeout, which every request carries: a call that makes no progress for that long fails its Work (and aborts the
 * communicator, so the peers' Works fail too) with stitch's message naming the ranks. Work.wait(timeout) with a
 * shorter timeout raises once it passes, leaving the call in flight; a per-call opts.timeout is not used. A split communicator keeps its parent's timeout,
 * so __init__.py splits only for a new_group whose timeout is the default group's (otherwise: a rendezvous).
 */
#include <torch/extension.h>

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/Types.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <pybind11/chrono.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "stitch.h"

// libstitch's count of calls that ran the pull engine (runtime/proc/exec_pull.h; an _Atomic long in C, read here
// with the same builtins): pull_calls() below, so a program can see that its registered tensors were read in place.
extern "C" long st_pull_calls;

namespace {

// The key under the group's PrefixStore where rank 0 publishes the unique id.
const char *const kIdKey = "stitch_unique_id";

// A Work over a stitch request (the file's top says how it is settled). `inside_` counts the threads inside
// stitch_wait or stitch_test on the request, so that it is freed only once the last of them is out and its outcome
// is claimed; the base class's mutex_, cv_, completed_ and exception_ are the Work's state.
class StitchWork : public c10d::Work {
  public:
    StitchWork(const char *call, c10d::OpType type, stitch_request_t *req, std::vector<at::Tensor> outputs,
               std::vector<at::Tensor> keep, std::function<void()> then)
        : c10d::Work(-1, type), call_(call), req_(req), outputs_(std::move(outputs)), keep_(std::move(keep)),
          then_(std::move(then)),
          future_(c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get())))
    {
    }

    ~StitchWork() override { settle(); }

    // Done once a thread has settled it; else a look at the request, settling it here when it is over and no
    // other thread has claimed it (never waits for another thread, which may hold a lock the caller needs).
    bool isCompleted() override
    {
        if (enter()) {
            int done = 0;
            stitch_status_t st = stitch_test(req_, &done);
            std::string msg = done && st != STITCH_OK ? stitch_request_error(req_) : "";
            bool mine = done && claim();
            leave();
            if (mine)
                complete(st, msg);
        }
        std::lock_guard<std::mutex> lock(mutex_);
        return completed_;
    }

    bool wait(std::chrono::milliseconds timeout) override
    {
        if (timeout == kNoTimeout) {
            settle();
        } else {
            std::unique_lock<std::mutex> lock(mutex_);
            if (!cv_.wait_for(lock, timeout, [&] { return completed_; }) && !settled_now())
                TORCH_CHECK(false, "stitch ", call_, ": not complete after ", timeout.count(),
                            " ms (Work.wait's timeout); the call is still in flight");
        }
        std::lock_guard<std::mutex> lock(mutex_);
        if (exception_)
            std::rethrow_exception(exception_);
        return true;
    }

    std::vector<at::Tensor> result() override { return outputs_; }
    c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }

    // Wait for the request and settle the Work (or wait until the thread that claimed it has).
    void settle()
    {
        if (enter()) {
            stitch_status_t st = stitch_wait(req_);
            std::string msg = st != STITCH_OK ? stitch_request_error(req_) : "";
            bool mine = claim();
            leave();
            if (mine) {
                complete(st, msg);
                return;
            }
        }
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return completed_; });
    }

  private:
    // wait(timeout)'s last look, the lock released: the completer may be behind an earlier request.
    bool settled_now()
    {
        mutex_.unlock();
        bool done = isCompleted();
        mutex_.lock();
        return done;
    }

    bool enter()
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (claimed_)
            return false;
        ++inside_;
        return true;
    }

    bool claim()
    {
        std::lock_guard<std::mutex> lock(mutex_);
        bool mine = !claimed_;
        claimed_ = true;
        return mine;
    }

    void leave()
    {
        bool last;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            last = --inside_ == 0 && claimed_ && !freed_;
            freed_ = freed_ || last;
        }
        if (last)
            stitch_request_free(req_);
    }

    // The request is over with st (msg its error): the outputs copied out, the future and the Work completed.
    void complete(stitch_status_t st, const std::string &msg)
    {
        std::exception_ptr err;
        try {
            TORCH_CHECK(st == STITCH_OK, "stitch ", call_, ": ", stitch_strerror(st), ": ", msg);
            if (then_)
                then_();
        } catch (...) {
            err = std::current_exception();
        }
        then_ = nullptr;
        keep_.clear();
        if (err)
            future_->setError(err);
        else
            future_->markCompleted(c10::IValue(outputs_));
        finish(err);
    }

    const char *call_;
    stitch_request_t *req_;
    std::vector<at::Tensor> outputs_;
    std::vector<at::Tensor> keep_; // what the call reads or writes besides the outputs, alive until it is over
    std::function<void()> then_;   // the copy-out of a list-form call
    c10::intrusive_ptr<c10::ivalue::Future> future_;
    int inside_ = 0;
    bool claimed_ = false, freed_ = false;
};

// A group's completer thread: settles its Works in issue order, started by the first. stop() settles what is left
// (each request completes or fails by the communicator's timeout) and joins it.
class Completer {
  public:
    ~Completer() { stop(); }

    void add(c10::intrusive_ptr<StitchWork> work)
    {
        std::lock_guard<std::mutex> lock(mu_);
        if (!thread_.joinable())
            thread_ = std::thread([this] { run(); });
        queue_.push_back(std::move(work));
        cv_.notify_one();
    }

    void stop()
    {
        {
            std::lock_guard<std::mutex> lock(mu_);
            stop_ = true;
            cv_.notify_one();
        }
        if (thread_.joinable())
            thread_.join();
    }

  private:
    void run()
    {
        for (;;) {
            c10::intrusive_ptr<StitchWork> work;
            {
                std::unique_lock<std::mutex> lock(mu_);
                cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
                if (queue_.empty())
                    return;
                work = std::move(queue_.front());
                queue_.pop_front();
            }
            work->settle();
        }
    }

    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<c10::intrusive_ptr<StitchWork>> queue_;
    bool stop_ = false;
    std::thread thread_;
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

// A group's communicator, owned by the group and by every tensor in its registered memory (empty() below): the last
// of them destroys it, so a registered tensor's memory stays mapped for as long as the tensor lives, also after
// destroy_process_group. A dead tensor's memory is only queued here by its deleter, which runs on whatever thread
// drops the last reference, maybe while another thread issues a call (libstitch takes one thread per communicator
// at a time); the group frees the queue (stitch_mem_free) before its next call, and the communicator's destroy
// frees whatever is left.
struct CommLife {
    explicit CommLife(stitch_comm_t *c) : comm(c) {}
    CommLife(const CommLife &) = delete;
    CommLife &operator=(const CommLife &) = delete;
    ~CommLife() { stitch_comm_destroy(comm); }

    void bury(void *p)
    {
        std::lock_guard<std::mutex> lock(mu);
        dead.push_back(p);
        ndead.store(dead.size(), std::memory_order_release);
    }

    std::vector<void *> take()
    {
        std::vector<void *> out;
        if (ndead.load(std::memory_order_acquire) == 0)
            return out;
        std::lock_guard<std::mutex> lock(mu);
        out.swap(dead);
        ndead.store(0, std::memory_order_release);
        return out;
    }

    stitch_comm_t *const comm;
    std::mutex mu;
    std::vector<void *> dead;
    std::atomic<size_t> ndead{0};
};

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
        life_ = std::make_shared<CommLife>(comm_);
    }

    // A group over a communicator that stitch_comm_split made (ownership passes to the group).
    ProcessGroupStitch(stitch_comm_t *comm, long long timeout_ms)
        : c10d::ProcessGroup(stitch_comm_rank(comm), stitch_comm_size(comm)), timeout_ms_(timeout_ms), split_(true),
          comm_(comm), life_(std::make_shared<CommLife>(comm))
    {
    }

    long long timeout_ms() const { return timeout_ms_; }
    bool made_by_split() const { return split_; }

    // A tensor of `sizes` and proto's dtype in the communicator's registered memory (stitch_mem_alloc: a shared
    // segment its peers on this host read in place, so a collective of this group on such tensors, on every rank,
    // pulls instead of streaming). Its storage keeps the communicator alive; when it dies its memory is queued
    // (CommLife). No elements: an ordinary empty tensor.
    at::Tensor empty(const std::vector<int64_t> &sizes, const at::Tensor &proto)
    {
        size_t bytes = proto.element_size();
        for (int64_t d : sizes) {
            TORCH_CHECK(d >= 0, "stitch_torch.empty: negative dimension ", d);
            TORCH_CHECK(!__builtin_mul_overflow(bytes, static_cast<size_t>(d), &bytes),
                        "stitch_torch.empty: the tensor's size in bytes overflows");
        }
        auto opts = at::TensorOptions().dtype(proto.scalar_type()).device(at::kCPU);
        if (bytes == 0)
            return at::empty(sizes, opts);
        void *p = nullptr;
        call("empty (stitch_mem_alloc)", [&] { return stitch_mem_alloc(comm_, bytes, &p); });
        std::shared_ptr<CommLife> life = life_;
        return torch::from_blob(p, sizes, [life](void *q) { life->bury(q); }, opts);
    }

    // stitch_comm_split on this group's communicator: collective over the group. NULL for a negative color.
    stitch_comm_t *split(int color, int key)
    {
        stitch_comm_t *out = nullptr;
        call("new_group (stitch_comm_split)", [&] { return stitch_comm_split(comm_, color, key, &out); });
        return out;
    }

    // Joins the completer without the GIL: destroy_process_group drops the group from Python, and the completer may
    // need the GIL to drop the last reference to a tensor that has a Python object (a deadlock under load, once).
    ~ProcessGroupStitch() override
    {
        if (PyGILState_Check()) {
            pybind11::gil_scoped_release nogil;
            shut();
        } else {
            shut();
        }
    }

    const std::string getBackendName() const override { return "stitch"; }

  private:
    void shut()
    {
        completer_.stop(); // every Work settled: its request complete and freed
        life_.reset();     // the communicator goes now, or with the last registered tensor
        comm_ = nullptr;
    }

  public:

    c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor> &tensors,
                                             const c10d::AllreduceOptions &opts) override
    {
        const at::Tensor &t = single(tensors, "all_reduce");
        stitch_dtype_t dt = check_tensor(t, "all_reduce");
        stitch_op_t op = to_stitch_op(opts.reduceOp, "all_reduce");
        return start("all_reduce", c10d::OpType::ALLREDUCE, tensors, {}, [&](stitch_request_t **req) {
            return stitch_iall_reduce(t.data_ptr(), t.data_ptr(), t.numel(), dt, op, comm_, req);
        });
    }

    c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor> &tensors,
                                             const c10d::BroadcastOptions &opts) override
    {
        const at::Tensor &t = single(tensors, "broadcast");
        stitch_dtype_t dt = check_tensor(t, "broadcast");
        int root = root_of(opts.rootRank, "broadcast");
        void *send = root == rank_ ? t.data_ptr() : nullptr;
        return start("broadcast", c10d::OpType::BROADCAST, tensors, {}, [&](stitch_request_t **req) {
            return stitch_ibroadcast(send, t.data_ptr(), t.numel(), dt, root, comm_, req);
        });
    }

    c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor> &tensors, const c10d::ReduceOptions &opts) override
    {
        const at::Tensor &t = single(tensors, "reduce");
        stitch_dtype_t dt = check_tensor(t, "reduce");
        stitch_op_t op = to_stitch_op(opts.reduceOp, "reduce");
        int root = root_of(opts.rootRank, "reduce");
        void *recv = root == rank_ ? t.data_ptr() : nullptr;
        return start("reduce", c10d::OpType::REDUCE, tensors, {}, [&](stitch_request_t **req) {
            return stitch_ireduce(t.data_ptr(), recv, t.numel(), dt, op, root, comm_, req);
        });
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
        int64_t n = in.numel();
        return start(
            "all_gather", c10d::OpType::ALLGATHER, outs, {in, flat},
            [&](stitch_request_t **req) {
                return stitch_iall_gather(in.data_ptr(), flat.data_ptr(), n, dt, comm_, req);
            },
            [outs, flat, n, p = size_] {
                for (int i = 0; i < p; i++)
                    outs[i].view(-1).copy_(flat.narrow(0, i * n, n));
            });
    }

    c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor &out, at::Tensor &in,
                                                   const c10d::AllgatherOptions &opts) override
    {
        stitch_dtype_t dt = check_tensor(in, "all_gather_into_tensor");
        check_tensor(out, "all_gather_into_tensor");
        check_same(in, out, "all_gather_into_tensor", "the output");
        TORCH_CHECK(out.numel() == size_ * in.numel(), "stitch all_gather_into_tensor: output has ", out.numel(),
                    " elements, expected ", size_, " x ", in.numel());
        return start("all_gather_into_tensor", c10d::OpType::_ALLGATHER_BASE, {out}, {in}, [&](stitch_request_t **req) {
            return stitch_iall_gather(in.data_ptr(), out.data_ptr(), in.numel(), dt, comm_, req);
        });
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
        return start("reduce_scatter", c10d::OpType::REDUCE_SCATTER, outputs, {flat}, [&](stitch_request_t **req) {
            return stitch_ireduce_scatter(flat.data_ptr(), out.data_ptr(), out.numel(), dt, op, comm_, req);
        });
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
        return start("reduce_scatter_tensor", c10d::OpType::_REDUCE_SCATTER_BASE, {out}, {in},
                     [&](stitch_request_t **req) {
                         return stitch_ireduce_scatter(in.data_ptr(), out.data_ptr(), out.numel(), dt, op, comm_, req);
                     });
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
            return start(call_name, c10d::OpType::ALLTOALL_BASE, {out}, {in}, [&](stitch_request_t **req) {
                return stitch_iall_to_all(in.data_ptr(), out.data_ptr(), in.numel() / size_, dt, comm_, req);
            });
        }
        std::vector<size_t> sc, sd, rc, rd; // copied by stitch_iall_to_all_v
        splits(in, in_splits, sc, sd, "input");
        splits(out, out_splits, rc, rd, "output");
        return start(call_name, c10d::OpType::ALLTOALL_BASE, {out}, {in}, [&](stitch_request_t **req) {
            return stitch_iall_to_all_v(in.data_ptr(), sc.data(), sd.data(), out.data_ptr(), rc.data(), rd.data(),
                                        dt, comm_, req);
        });
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
        return start(
            "all_to_all", c10d::OpType::ALLTOALL, outputs, {send, recv},
            [&](stitch_request_t **req) {
                return stitch_iall_to_all_v(send.data_ptr(), sc.data(), sd.data(), recv.data_ptr(), rc.data(),
                                            rd.data(), dt, comm_, req);
            },
            [outs = outputs, recv, rc, rd] {
                for (size_t i = 0; i < outs.size(); i++)
                    outs[i].view(-1).copy_(recv.narrow(0, rd[i], rc[i]));
            });
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
        std::vector<at::Tensor> outs = rank_ == root ? outputs[0] : std::vector<at::Tensor>();
        int64_t n = in.numel();
        std::function<void()> then;
        if (rank_ == root)
            then = [outs, flat, n] {
                for (size_t i = 0; i < outs.size(); i++)
                    outs[i].view(-1).copy_(flat.narrow(0, i * n, n));
            };
        return start(
            "gather", c10d::OpType::GATHER, outs, {in, flat},
            [&](stitch_request_t **req) { return stitch_igather(in.data_ptr(), recv, n, dt, root, comm_, req); },
            then);
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
        return start("scatter", c10d::OpType::SCATTER, outputs, {flat}, [&](stitch_request_t **req) {
            return stitch_iscatter(send, out.data_ptr(), out.numel(), dt, root, comm_, req);
        });
    }

    c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions &opts) override
    {
        return start("barrier", c10d::OpType::BARRIER, {}, {},
                     [&](stitch_request_t **req) { return stitch_ibarrier(comm_, req); });
    }

    // torch.distributed.send is isend's wait(): complete once the receiver has the data or the transport took it
    // (stitch.h). isends and irecvs in flight together complete in any order on either side.
    c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor> &tensors, int dst, int tag) override
    {
        const at::Tensor &t = single(tensors, "send");
        stitch_dtype_t dt = check_tensor(t, "send");
        check_peer(dst, tag, "send", "destination");
        return start("send", c10d::OpType::SEND, tensors, {}, [&](stitch_request_t **req) {
            return stitch_isend(t.data_ptr(), t.numel(), dt, dst, comm_, req);
        });
    }

    c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor> &tensors, int src, int tag) override
    {
        const at::Tensor &t = single(tensors, "recv");
        stitch_dtype_t dt = check_tensor(t, "recv");
        check_peer(src, tag, "recv", "source");
        return start("recv", c10d::OpType::RECV, tensors, {}, [&](stitch_request_t **req) {
            return stitch_irecv(t.data_ptr(), t.numel(), dt, src, comm_, req);
        });
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
            reap();
            st = run();
        }
        if (st != STITCH_OK)
            TORCH_CHECK(false, "stitch ", name, ": ", stitch_strerror(st), ": ", stitch_comm_last_error(comm_));
    }

    // Frees the registered memory of the tensors that died since the last call (CommLife), under the mutex:
    // stitch_mem_free first waits for the group's calls in flight, then for any peer still reading it. A free that
    // fails is said (the memory then goes with the communicator), not raised: the call it precedes is not at fault.
    void reap()
    {
        for (void *p : life_->take())
            if (stitch_mem_free(comm_, p) != STITCH_OK)
                TORCH_WARN("stitch: stitch_mem_free of a dead registered tensor's memory failed: ",
                           stitch_comm_last_error(comm_));
    }

    // Issues one non-blocking stitch call under the mutex; its Work, handed to the completer too. `keep`: the
    // tensors the call uses besides the outputs; `then`: what to do with the outputs once it is over.
    template <class F>
    c10::intrusive_ptr<c10d::Work> start(const char *name, c10d::OpType type, std::vector<at::Tensor> outputs,
                                         std::vector<at::Tensor> keep, F &&issue, std::function<void()> then = {})
    {
        stitch_request_t *req = nullptr;
        stitch_status_t st;
        {
            std::lock_guard<std::mutex> lock(mu_);
            reap();
            st = issue(&req);
        }
        if (st != STITCH_OK)
            TORCH_CHECK(false, "stitch ", name, ": ", stitch_strerror(st), ": ", stitch_comm_last_error(comm_));
        auto work = c10::make_intrusive<StitchWork>(name, type, req, std::move(outputs), std::move(keep),
                                                    std::move(then));
        completer_.add(work);
        return work;
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
                    " is this rank (stitch has no send or receive with oneself outside a group)");
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
    std::shared_ptr<CommLife> life_; // owns comm_ (with the registered tensors)
    std::mutex mu_;
    Completer completer_;
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
        "empty",
        [](const c10::intrusive_ptr<c10d::ProcessGroup> &pg, const std::vector<int64_t> &sizes,
           const at::Tensor &proto) { return stitch_group(pg, "empty").empty(sizes, proto); },
        py::arg("group"), py::arg("sizes"), py::arg("proto"),
        "a CPU tensor of `sizes` and proto's dtype in the group's registered memory (stitch_mem_alloc)");
    m.def(
        "pull_calls", [] { return __atomic_load_n(&st_pull_calls, __ATOMIC_RELAXED); },
        "collectives of this process that ran the pull engine (registered memory, or STITCH_CMA), all groups");
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
