# algos.dsl - stitch's catalogue of collective algorithms, after HCCL's (see docs/language.md for the language,
# docs/algorithms.md and ../shared/spec/algorithms.md for the schedules).
#
# Every algorithm is written for any rank count p: `r` is my rank, `units` cuts the collective's vector into U
# equal units, a `step` is a set of transfers that happen at once, and only senders are written (`send UNITS to
# RANK [reduce]`); the receiver of each transfer is implied. `stitchc verify` proves each one for p = 1..64.

# ---------------------------------------------------------------------------------------------------------------
# Ring (spec section 3): right neighbour r+1, left neighbour r-1; p-1 steps per phase, one unit per step.

# After p-1 steps rank r holds the full reduction of unit r.
algorithm ring implements reduce_scatter {
  units p
  from { (r - 1) % p }                                           # who sends to me: my left neighbour
  step t in 0 .. p - 2 {
    send unit (r - 1 - t) % p to (r + 1) % p reduce
  }
}

# Each rank forwards the unit it received in the previous step.
algorithm ring implements all_gather {
  units p
  from { (r - 1) % p }
  step t in 0 .. p - 2 {
    send unit (r - t) % p to (r + 1) % p
  }
}

algorithm ring implements all_reduce {
  units p
  phase reduce_scatter using ring
  phase all_gather using ring
}

# ---------------------------------------------------------------------------------------------------------------
# Mesh (spec section 2): one step per phase with p-1 concurrent transfers, one per peer. The receiver applies the
# p-1 reductions into its unit in a fixed order (the schedule's), which keeps results deterministic.

algorithm mesh implements reduce_scatter {
  from all
  units p
  step {
    for t in 1 .. p - 1 {
      send unit (r + t) % p to (r + t) % p reduce
    }
  }
}

algorithm mesh implements all_gather {
  from all
  units p
  step {
    for t in 1 .. p - 1 {
      send unit r to (r + t) % p
    }
  }
}

algorithm mesh implements all_reduce {
  units p
  phase reduce_scatter using mesh
  phase all_gather using mesh
}

# Mesh one-shot (HCCL's one-shot mesh all_reduce, for small data): one round on the wire instead of two. Every rank
# sends its whole vector into slot r of every peer's scratch (slot k holds rank k's vector) and copies its own
# into its own slot; then every rank reduces the slots in rank order 0, 1, ..., p-1 and copies the sum out. All
# ranks compute the same expression, so the result is bit-identical everywhere. It moves p-1 vectors per rank, so
# it only pays where latency dominates: the runtime picks it below a size threshold (docs/algorithms.md).
algorithm mesh_oneshot implements all_reduce {
  units 1 scratch p
  from all
  if p > 1 {
    step {
      for t in 1 .. p - 1 { send unit 0 to (r + t) % p at unit 1 + r }
      send unit 0 to r at unit 1 + r
    }
    step { for k in 1 .. p - 1 { send unit 1 + k to r at unit 1 reduce } }
    step { send unit 1 to r at unit 0 }
  }
}

# Deterministic Mesh with a local reduce (spec 14.3): peers only copy my unit into my scratch slots (slot k holds
# the copy from rank r-k), then I reduce the p copies in a fixed tree: first A[i] += A[i+P] for i < p-P
# (P = 2^floor(log2 p)), then halving, h = P/2 .. 1. No reduction happens on the wire.
algorithm mesh_det implements reduce_scatter {
  units p scratch p
  from all
  fn slot(i) = if i == 0 then r else p + i                       # A[i]: my own unit, or scratch slot i
  let P = pow2(floor_log2(p))
  step { for t in 1 .. p - 1 { send unit (r + t) % p to (r + t) % p at unit p + t } }
  if p > P {
    step { for i in 0 .. p - P - 1 { send unit slot(i + P) to r at unit slot(i) reduce } }
  }
  for j in 1 .. floor_log2(p) {
    let h = P / pow2(j)
    step { for i in 0 .. h - 1 { send unit slot(i + h) to r at unit slot(i) reduce } }
  }
}

algorithm mesh_det implements all_reduce {
  units p scratch p
  phase reduce_scatter using mesh_det
  phase all_gather using mesh
}

# Strict determinism (HCCL_DETERMINISTIC=strict, spec 14.2/14.3): every element is reduced in one fixed order over
# the absolute ranks 0..p-1, whatever the count, the owner or the algorithm asked for. Each rank x writes its unit for
# owner j into j's scratch slot x (A[x], A[j] = j's own unit); the owner reduces A[0..p-1] in HCCL's order-preserving
# tree (order_preserved_common.h): n = p; while n > 1, M = the largest power of two below n, A[i - M] += A[i] for
# i = M .. n - 1, n = M; A[0] is the sum, copied into the owner's unit. The runtime runs it for every all_reduce and
# reduce_scatter under strict (runtime/select/choose.c).
algorithm mesh_strict implements reduce_scatter {
  units p scratch p
  from all
  fn slot(q) = if q == r then r else p + q                       # A[q]: rank q's copy of my unit
  let K = ceil_log2(p), M = pow2(max(K - 1, 0))
  step { for t in 1 .. p - 1 { send unit (r + t) % p to (r + t) % p at unit p + r } }
  if p > 1 {
    step { for i in M .. p - 1 { send unit slot(i) to r at unit slot(i - M) reduce } }
    for j in 1 .. K - 1 {
      let h = M / pow2(j)
      step { for i in h .. 2 * h - 1 { send unit slot(i) to r at unit slot(i - h) reduce } }
    }
    step { if r != 0 { send unit slot(0) to r at unit r } }
  }
}

algorithm mesh_strict implements all_reduce {
  units p scratch p
  phase reduce_scatter using mesh_strict
  phase all_gather using mesh
}

# ---------------------------------------------------------------------------------------------------------------
# RHD, recursive halving-doubling (spec section 4). The largest power of two B = 2^m <= p forms the block; the
# first 2*extra ranks pair up as (2i, 2i+1), the odd one folds its data into the even one, which joins the block
# as block rank i; ranks from 2*extra on join as r - extra. Inside the block, halving exchanges with the block rank
# at distance B/2, B/4, ... and doubling with 1, 2, 4, ...

algorithm rhd implements all_reduce {
  let m = floor_log2(p), B = pow2(m), extra = p - B
  fn block(x) = if x < 2 * extra then x / 2 else x - extra       # block rank of a rank in the block
  fn rank_of(b) = if b < extra then 2 * b else b + extra           # rank of a block rank
  let inside = r >= 2 * extra or r % 2 == 0
  units B
  from { rank_of(block(r) ^ pow2(s)) : s in 0 .. m - 1 if inside }   # my partners in the block
  from { r ^ 1 : i in 0 .. 0 if r < 2 * extra }                   # and the one I fold with
  if extra > 0 {
    step { if not inside { send all to r - 1 reduce } }             # fold
  }
  for s in 0 .. m - 1 {                                            # reduce-scatter, distance halving
    step { if inside {
      let mask = pow2(m - 1 - s), q = block(r) ^ mask, lo = q & ~(mask - 1)
      send lo .. lo + mask - 1 to rank_of(q) reduce
    } }
  }
  for s in 0 .. m - 1 {                                            # all-gather, distance doubling
    step { if inside {
      let mask = pow2(s), q = block(r) ^ mask, lo = block(r) & ~(mask - 1)
      send lo .. lo + mask - 1 to rank_of(q)
    } }
  }
  if extra > 0 {
    step { if r < 2 * extra and r % 2 == 0 { send all to r + 1 } }  # unfold
  }
}

# Reduce-scatter over p units (spec 4.4): block rank b < extra owns the two original units 2b, 2b+1, the others
# one unit b + extra, so block slices map to runs of original units: first(b) .. last(b).
algorithm rhd implements reduce_scatter {
  let m = floor_log2(p), B = pow2(m), extra = p - B
  fn block(x) = if x < 2 * extra then x / 2 else x - extra
  fn rank_of(b) = if b < extra then 2 * b else b + extra
  fn first(b) = if b < extra then 2 * b else b + extra
  fn last(b) = if b < extra then 2 * b + 1 else b + extra
  let inside = r >= 2 * extra or r % 2 == 0
  units p
  from { rank_of(block(r) ^ pow2(s)) : s in 0 .. m - 1 if inside }   # my partners in the block
  from { r ^ 1 : i in 0 .. 0 if r < 2 * extra }                   # and the one I fold with
  if extra > 0 {
    step { if not inside { send all to r - 1 reduce } }
  }
  for s in 0 .. m - 1 {
    step { if inside {
      let mask = pow2(m - 1 - s), q = block(r) ^ mask, lo = q & ~(mask - 1)
      send first(lo) .. last(lo + mask - 1) to rank_of(q) reduce
    } }
  }
  if extra > 0 {
    step { if r < 2 * extra and r % 2 == 0 { send unit r + 1 to r + 1 } }   # hand the odd partner its unit
  }
}

# All-gather over p units (spec 4.5): the odd partner first hands its unit to the even one, the block doubles,
# then the even rank hands the whole result back.
algorithm rhd implements all_gather {
  let m = floor_log2(p), B = pow2(m), extra = p - B
  fn block(x) = if x < 2 * extra then x / 2 else x - extra
  fn rank_of(b) = if b < extra then 2 * b else b + extra
  fn first(b) = if b < extra then 2 * b else b + extra
  fn last(b) = if b < extra then 2 * b + 1 else b + extra
  let inside = r >= 2 * extra or r % 2 == 0
  units p
  from { rank_of(block(r) ^ pow2(s)) : s in 0 .. m - 1 if inside }   # my partners in the block
  from { r ^ 1 : i in 0 .. 0 if r < 2 * extra }                   # and the one I fold with
  if extra > 0 {
    step { if not inside { send unit r to r - 1 } }
  }
  for s in 0 .. m - 1 {
    step { if inside {
      let mask = pow2(s), q = block(r) ^ mask, lo = block(r) & ~(mask - 1)
      send first(lo) .. last(lo + mask - 1) to rank_of(q)
    } }
  }
  if extra > 0 {
    step { if r < 2 * extra and r % 2 == 0 { send { u : u in 0 .. p - 1 if u != r + 1 } to r + 1 } }
  }
}

# Rooted collectives of Ring (spec section 3): chains starting or ending at the root. Broadcast and reduce cut
# the vector into p segments that follow one another down the chain (spec's PROPOSAL: a pipelined chain with p
# segments), so the chain is busy after p-1 steps and done after 2p-2.

algorithm ring implements broadcast {
  units p
  from { (r - 1) % p }
  let delta = (r - root) % p                                     # my distance down the chain
  step t in 0 .. 2 * p - 3 {
    if delta <= p - 2 and t - delta >= 0 and t - delta <= p - 1 {
      send unit t - delta to (r + 1) % p
    }
  }
}

algorithm ring implements reduce {
  units p
  from { (r - 1) % p }
  let e = (r - root - 1) % p                                     # root+1 starts the chain, root ends it
  step t in 0 .. 2 * p - 3 {
    if e <= p - 2 and t - e >= 0 and t - e <= p - 1 {
      send unit t - e to (r + 1) % p reduce
    }
  }
}

# Scatter: the root sends the farthest rank's block first; every rank forwards what it got in the step before.
algorithm ring implements scatter {
  units p
  from { (r - 1) % p }
  let delta = (r - root) % p
  step t in 0 .. p - 2 {
    if delta <= t { send unit (root + p - 1 - t + delta) % p to (r + 1) % p }
  }
}

algorithm ring implements gather {
  units p
  from { (r + 1) % p }
  let delta = (r - root) % p
  step t in 0 .. p - 2 {
    if delta >= 1 and delta + t <= p - 1 { send unit (root + delta + t) % p to (r - 1) % p }
  }
}

# Rooted collectives and all-to-all of Mesh (spec section 2): one step, every peer at once.

algorithm mesh implements scatter {
  units p
  from { root }
  step { if r == root { for t in 1 .. p - 1 { send unit (r + t) % p to (r + t) % p } } }
}

algorithm mesh implements gather {
  from all
  units p
  step { if r != root { send unit r to root } }
}

algorithm mesh implements broadcast {
  units p
  phase scatter using mesh
  phase all_gather using mesh
}

algorithm mesh implements reduce {
  units p
  phase reduce_scatter using mesh
  phase gather using mesh
}

# Unit i*p + j is what rank i sends to rank j; the runtime copies my own block i*p+i before the first step.
algorithm mesh implements all_to_all {
  from all
  units p * p
  step { for t in 1 .. p - 1 { send unit r * p + (r + t) % p to (r + t) % p } }
}

# ---------------------------------------------------------------------------------------------------------------
# RHD's rooted collectives (spec 4.6): the pairs fold toward the root's parity, so the root is always in the block.

algorithm rhd implements broadcast {
  let m = floor_log2(p), B = pow2(m), extra = p - B
  let par = if root < 2 * extra then root % 2 else 0             # which partner of a pair joins the block
  fn inside(x) = x >= 2 * extra or x % 2 == par
  fn block(x) = if x < 2 * extra then x / 2 else x - extra
  fn rank_of(b) = if b < extra then 2 * b + par else b + extra
  units 1
  from { rank_of(block(r) ^ pow2(s)) : s in 0 .. m - 1 if inside(r) }
  from { r ^ 1 : i in 0 .. 0 if r < 2 * extra }
  for i in 0 .. m - 1 {                                          # binomial tree, distance B/2, B/4, ...
    let mask = pow2(m - 1 - i)
    step { if inside(r) and (block(r) ^ block(root)) & (2 * mask - 1) == 0 {
      send all to rank_of(block(r) ^ mask)
    } }
  }
  if extra > 0 {
    step { if inside(r) and r < 2 * extra { send all to r ^ 1 } }   # unfold to the partner
  }
}

algorithm rhd implements reduce {
  let m = floor_log2(p), B = pow2(m), extra = p - B
  let par = if root < 2 * extra then root % 2 else 0
  fn inside(x) = x >= 2 * extra or x % 2 == par
  fn block(x) = if x < 2 * extra then x / 2 else x - extra
  fn rank_of(b) = if b < extra then 2 * b + par else b + extra
  units B
  from { rank_of(block(r) ^ pow2(s)) : s in 0 .. m - 1 if inside(r) }
  from { r ^ 1 : i in 0 .. 0 if r < 2 * extra }
  if extra > 0 {
    step { if not inside(r) { send all to r ^ 1 reduce } }        # fold toward the root's parity
  }
  for s in 0 .. m - 1 {                                          # reduce-scatter inside the block
    step { if inside(r) {
      let mask = pow2(m - 1 - s), q = block(r) ^ mask, lo = q & ~(mask - 1)
      send lo .. lo + mask - 1 to rank_of(q) reduce
    } }
  }
  for s in 0 .. m - 1 {                                          # binomial gather to the root's block rank
    let mask = pow2(s)
    step { if inside(r) and (block(r) ^ block(root)) & (2 * mask - 1) == mask {
      let lo = block(r) & ~(mask - 1)
      send lo .. lo + mask - 1 to rank_of(block(r) ^ mask)
    } }
  }
}

# ---------------------------------------------------------------------------------------------------------------
# NHR, nonuniform hierarchical ring (spec section 5): ceil(log2 p) steps per phase whatever p is; step k talks to
# the rank at distance 2^k with c_k = floor((p-1+2^k) / 2^(k+1)) units, so every rank sends exactly p-1 units.

algorithm nhr implements reduce_scatter {
  units p
  from { (r + pow2(k)) % p : k in 0 .. ceil_log2(p) - 1 }          # step k: from distance 2^k above
  for k in 0 .. ceil_log2(p) - 1 {
    let d = pow2(k), c = (p - 1 + d) / (2 * d)
    step { send { (r - d - 2 * d * i) % p : i in 0 .. c - 1 } to (r - d) % p reduce }
  }
}

algorithm nhr implements all_gather {
  units p
  from { (r - pow2(k)) % p : k in 0 .. ceil_log2(p) - 1 }
  for s in 0 .. ceil_log2(p) - 1 {
    let d = pow2(ceil_log2(p) - 1 - s), c = (p - 1 + d) / (2 * d)
    step { send { (r - 2 * d * i) % p : i in 0 .. c - 1 } to (r + d) % p }
  }
}

# Scatter (5.3): delta = (root - r) mod p; N_k senders per step (p - d at a last step of a non-power of two).
# The spec's schedule lists, for some p, units the sender never received; they are useless, so `held` keeps
# only the units a rank has (spec's PROPOSAL). In distances from the root: the rank at distance dl in
# [2^j, 2^(j+1)) got, at step j, from the rank at dl - 2^j, the units at distance dl + 2^(j+1) i (i < c_j) that
# the sender held itself.
algorithm nhr implements scatter {
  units p
  from { (r + pow2(k)) % p : k in 0 .. ceil_log2(p) - 1 }
  fn c(k) = (p - 1 + pow2(k)) / pow2(k + 1)
  fn held_at(dl, u, j) = (u - dl) % p % pow2(j + 1) == 0 and (u - dl) % p / pow2(j + 1) < c(j) and held(dl - pow2(j), u)
  fn held(dl, u) = dl == 0 or held_at(dl, u, floor_log2(dl))
  let delta = (root - r) % p
  for k in 0 .. ceil_log2(p) - 1 {
    let d = pow2(k), senders = if k == ceil_log2(p) - 1 and p != pow2(k + 1) then p - d else d
    step { if delta < senders {
      send { (r - d - 2 * d * i) % p : i in 0 .. c(k) - 1 if held(delta, delta + d + 2 * d * i) } to (r - d) % p
    } }
  }
}

# The tree map (5.4): a unit's position moves, round by round, to the front half (even offsets) or the back half
# (odd offsets) of its block, so that the units of one step end up contiguous. sigma(u) is where unit u ends.
# place follows the unit's block (start b, length len) and its offset o in it: len divides p (it halves only while
# even, and the first odd length ends the rounds), so the halves are blocks of the next round, and no division is
# by anything but 2 (a plan at p = 8,192 evaluates sigma 8,192 times, 12 rounds each). The rounds end at the
# first k with p <= 3 * 2^k, the spec's (p - 1 + 2^k) >> (k + 1) <= 1 (or k >= ceil_log2(p)) in one comparison:
# floor((p - 1 + 2^k) / 2^(k + 1)) <= 1 is p - 1 + 2^k < 2^(k + 2), i.e. p <= 3 * 2^k, which k >= ceil_log2(p)
# implies.
algorithm nhr implements all_reduce {
  fn place(b, o, k, len) = if p <= 3 * pow2(k) then b + o
                           else if len % 2 == 1 then b + (o + o % 2 * len) / 2
                           else place(b + o % 2 * (len / 2), o / 2, k + 1, len / 2)
  fn sigma(u) = place(0, u, 0, p)
  units p
  layout sigma
  phase reduce_scatter using nhr
  phase all_gather using nhr
}

algorithm nhr implements broadcast {
  fn place(b, o, k, len) = if p <= 3 * pow2(k) then b + o
                           else if len % 2 == 1 then b + (o + o % 2 * len) / 2
                           else place(b + o % 2 * (len / 2), o / 2, k + 1, len / 2)
  fn sigma(u) = place(0, u, 0, p)
  units p
  layout sigma
  phase scatter using nhr
  phase all_gather using nhr
}

# One-shot trees for small data (5.5): whole-buffer binomial trees.
algorithm nhr_oneshot implements reduce {
  units 1
  from { (r + pow2(k)) % p : k in 0 .. ceil_log2(p) - 1 }
  for k in 0 .. ceil_log2(p) - 1 {
    let delta = (r - root) % p, n = (p - 1 + pow2(k)) / pow2(k + 1)
    step { if delta / pow2(k + 1) < n and delta % pow2(k + 1) == pow2(k) { send all to (r - pow2(k)) % p reduce } }
  }
}

algorithm nhr_oneshot implements broadcast {
  units 1
  from { (r - pow2(k)) % p : k in 0 .. ceil_log2(p) - 1 }
  for s in 0 .. ceil_log2(p) - 1 {
    let k = ceil_log2(p) - 1 - s, delta = (r - root) % p, n = (p - 1 + pow2(k)) / pow2(k + 1)
    step { if delta / pow2(k + 1) < n and delta % pow2(k + 1) == 0 and delta + pow2(k) < p {
      send all to (r + pow2(k)) % p
    } }
  }
}

# All-reduce one-shot: reduce to rank 0, then broadcast from it (an all_reduce has no root: root is 0 here).
algorithm nhr_oneshot implements all_reduce {
  units 1
  phase reduce using nhr_oneshot
  phase broadcast using nhr_oneshot
}

# ---------------------------------------------------------------------------------------------------------------
# NB, nonuniform Bruck (spec section 6): NHR's mirror image (r -> -r) without the tree map; strided unit sets.

algorithm nb implements reduce_scatter {
  units p
  from { (r - pow2(k)) % p : k in 0 .. ceil_log2(p) - 1 }
  for k in 0 .. ceil_log2(p) - 1 {
    let d = pow2(k), c = (p - 1 + d) / (2 * d)
    step { send { (r + d + 2 * d * i) % p : i in 0 .. c - 1 } to (r + d) % p reduce }
  }
}

algorithm nb implements all_gather {
  units p
  from { (r - pow2(k)) % p : k in 0 .. ceil_log2(p) - 1 }
  for k in 0 .. ceil_log2(p) - 1 {
    let d = pow2(k), c = if k == ceil_log2(p) - 1 and p != pow2(k + 1) then p - d else d
    step { send { (r - i) % p : i in 0 .. c - 1 } to (r + d) % p }
  }
}

algorithm nb implements all_reduce {
  units p
  phase reduce_scatter using nb
  phase all_gather using nb
}

# Scatter (6.3): the ranks that hold data double every step; `held` (as for NHR, mirrored) skips the units a
# sender never received, which is what HCCL's per-slice "valid" flag does.
algorithm nb implements scatter {
  units p
  from { (r - pow2(k)) % p : k in 0 .. ceil_log2(p) - 1 }
  fn c(k) = (p - 1 + pow2(k)) / pow2(k + 1)
  fn held_at(dl, u, j) = (u - dl) % p % pow2(j + 1) == 0 and (u - dl) % p / pow2(j + 1) < c(j) and held(dl - pow2(j), u)
  fn held(dl, u) = dl == 0 or held_at(dl, u, floor_log2(dl))
  let delta = (r - root) % p
  for k in 0 .. ceil_log2(p) - 1 {
    let d = pow2(k)
    step { if delta < d and delta + d < p {
      send { (r + d + 2 * d * i) % p : i in 0 .. c(k) - 1 if held(delta, delta + d + 2 * d * i) } to (r + d) % p
    } }
  }
}

algorithm nb implements broadcast {
  units p
  phase scatter using nb
  phase all_gather using nb
}

# Binary broadcast (6.3): a binomial tree of whole buffers, distance 1, 2, 4, ... from the root.
algorithm nb_binary implements broadcast {
  units 1
  from { (r - pow2(k)) % p : k in 0 .. ceil_log2(p) - 1 }
  for k in 0 .. ceil_log2(p) - 1 {
    let delta = (r - root) % p
    step { if delta < pow2(k) and delta + pow2(k) < p { send all to (r + pow2(k)) % p } }
  }
}

# ---------------------------------------------------------------------------------------------------------------
# Pipeline (spec section 7): S servers x L ranks, rank (s, l) = member(s, l). The inter-server ring among the
# same-index ranks runs in the same steps as the intra-server mesh. HCCL stages chunks in two or three scratch
# buffers because its copies are done by DMA engines; in the unit model the chunk lands in its final unit, so
# the schedule (peers, chunks, S steps) is HCCL's without the staging copies. Like HCCL's, it needs servers of
# equal size; `require` says so, so the verifier's sweep of unequal layouts skips it and the runtime refuses it.

algorithm pipeline implements all_gather {
  units p
  let S = groups(), L = size(group(r)), s = group(r), l = index(r)
  require uniform()                             # equal servers: the same-index ring needs rank l in every one
  from { member(s, j) : j in 0 .. L - 1 }                       # my server's ranks, and my ring neighbours
  from { member((s - 1) % S, l), member((s + 1) % S, l) }
  step t in 0 .. S - 1 {
    let c = member((s - t) % S, l)                              # received from the ring in the step before
    if t < S - 1 { send unit c to member((s + 1) % S, l) }
    for j in 1 .. L - 1 { send unit c to member(s, (l + j) % L) }
  }
}

# The chunk of target g_t = (s+1+t, l) collects, at step t, every local peer's contribution (mesh) and the
# partial of the servers after mine (ring, sent one step later than it was made, so the two overlap).
algorithm pipeline implements reduce_scatter {
  units p
  let S = groups(), L = size(group(r)), s = group(r), l = index(r)
  require uniform()                             # equal servers: the same-index ring needs rank l in every one
  from { member(s, j) : j in 0 .. L - 1 }                       # my server's ranks, and my ring neighbours
  from { member((s - 1) % S, l), member((s + 1) % S, l) }
  step t in 0 .. S - 1 {
    for j in 1 .. L - 1 { send unit member((s + 1 + t) % S, (l + j) % L) to member(s, (l + j) % L) reduce }
    if t >= 1 { send unit member((s + t) % S, l) to member((s - 1) % S, l) reduce }
  }
}

algorithm pipeline implements all_reduce {
  units p
  phase reduce_scatter using pipeline
  phase all_gather using pipeline
}

# ---------------------------------------------------------------------------------------------------------------
# Pairwise (spec section 8): one peer in, one peer out per step. Unit i*p + j is rank i's block for rank j; the
# runtime copies my block for myself before the first step (HCCL's step 0).

algorithm pairwise implements all_to_all, all_to_all_v {
  units p * p
  from all
  step i in 1 .. p - 1 { send unit r * p + (r + i) % p to (r + i) % p }
}

# Pipeline's all_to_all and all_to_all_v (spec 7's collectives; 8's "two-level pipeline" of A2's alltoall
# executor), after pairwise so that pairwise stays the all-to-alls' first algorithm (a policy's fallback, and the
# earlier one on a tie). HCCL gathers at rank (s, l) every block its server sends to rank (e, l) of server e (intra
# mesh, SDMA), then (s, l) sends them to (e, l) in one message (inter, same-index pairwise), while the mesh gathers
# for the next server. Step t gathers for the server at distance t + 1 (the last step: my own server, straight into
# the outputs) and sends what step t - 1 gathered; block (x, j) waits at rank (s, index(j)) in scratch slot
# p*p + index(x)*S + group(j). S steps;
# block (x, x) is the runtime's copy. L = 1: pairwise among the servers; S = 1: mesh.
algorithm pipeline implements all_to_all {
  let S = groups(), L = size(group(r)), s = group(r), l = index(r)
  require uniform()                             # equal servers: the same-index ranks relay
  units p * p scratch p
  from { member(s, j) : j in 0 .. L - 1 }                       # my server's ranks, and my same-index ranks
  from { member(g, l) : g in 0 .. S - 1 }
  step t in 0 .. S - 1 {
    let e = (s + t + 1) % S, f = (s + t) % S                    # gathered for now, sent now
    for i in 0 .. L - 1 {
      if i != l and e != s { send unit r * p + member(e, i) to member(s, i) at unit p * p + l * S + e }
      if i != l and e == s { send unit r * p + member(s, i) to member(s, i) }
    }
    if t >= 1 {
      send unit r * p + member(f, l) to member(f, l)
      for i in 0 .. L - 1 {
        if i != l { send unit p * p + i * S + f to member(f, l) at unit member(s, i) * p + member(f, l) }
      }
    }
  }
}

# all_to_all_v has no scratch (its blocks differ in length, so a relay has no slot of one size: docs/language.md
# section 6), so each block goes straight from its owner, in the same order: the first step sends to my server's
# ranks and, at once, to the server at distance 1; step t to the server at distance t + 1. max(S - 1, 1) steps,
# one server's L ranks in each: intra-server traffic overlaps the first inter-server step.
algorithm pipeline implements all_to_all_v {
  let S = groups(), L = size(group(r)), s = group(r), l = index(r)
  require uniform()
  units p * p
  from all
  for t in 0 .. max(S - 2, 0) {
    let e = (s + t + 1) % S
    step {
      if t == 0 { for j in 1 .. L - 1 { send unit r * p + member(s, (l + j) % L) to member(s, (l + j) % L) } }
      if e != s { for j in 0 .. L - 1 { send unit r * p + member(e, (l + j) % L) to member(e, (l + j) % L) } }
    }
  }
}

# ---------------------------------------------------------------------------------------------------------------
# Composition on sub-communicators (docs/language.md, section 5): `phase COLL within MEMBERS [units S] using ALGO`
# runs ALGO on the members only (my index among them is my rank there, their count is p), its units standing for
# the units S of mine; a rank that is not a member sits the phase out, and a phase over several parts lasts as long
# as its longest part. `within group(r)` is my group, `within index(r)` the ranks at my index in every group.
#
# The algorithms a composite runs are named through roles, algorithms that only choose: `level0` inside a group,
# `level1` between groups (spec 1.3, 13.2), `ahc_intra` and `ahc_inter` for AHC (9.6). They are where a
# configuration (HCCL_ALGO's level entries) slots in, and they are algorithms of their own too.

algorithm level0 implements reduce_scatter { phase reduce_scatter using mesh }
algorithm level0 implements all_gather { phase all_gather using mesh }
algorithm level0 implements all_reduce { phase all_reduce using mesh }
algorithm level0 implements broadcast { phase broadcast using mesh }
algorithm level0 implements reduce { phase reduce using mesh }
algorithm level0 implements scatter { phase scatter using mesh }
algorithm level0 implements gather { phase gather using mesh }

# Between servers (13.2, GetDefaultAlgoLevel1V1): 8 or more servers, or a power of two, recursive halving-doubling,
# else ring. p here is the number of servers taking part. (Scatter and gather have no RHD: ring.)
algorithm level1 implements reduce_scatter {
  if p >= 8 or p & (p - 1) == 0 { phase reduce_scatter using rhd } else { phase reduce_scatter using ring }
}
algorithm level1 implements all_gather {
  if p >= 8 or p & (p - 1) == 0 { phase all_gather using rhd } else { phase all_gather using ring }
}
algorithm level1 implements all_reduce {
  if p >= 8 or p & (p - 1) == 0 { phase all_reduce using rhd } else { phase all_reduce using ring }
}
algorithm level1 implements broadcast {
  if p >= 8 or p & (p - 1) == 0 { phase broadcast using rhd } else { phase broadcast using ring }
}
algorithm level1 implements reduce {
  if p >= 8 or p & (p - 1) == 0 { phase reduce using rhd } else { phase reduce using ring }
}
algorithm level1 implements scatter { phase scatter using ring }
algorithm level1 implements gather { phase gather using ring }

# Hierarchical decomposition (spec 1.3) for equal groups: S groups (servers) of L ranks, level0 inside a group,
# level1 among the ranks with the same index. Unit u of reduce_scatter, all_gather, scatter and gather is rank u's
# block, so a group's region is the units of its members; the others cut the vector into L chunks of S units.
# Unequal groups have no same-index partner for every chunk: there reduce_scatter, all_gather and all_reduce run
# AHC (below), the rooted collectives level1 over all ranks, all_to_all pairwise.

algorithm hier implements reduce_scatter {                      # level1 RS of the regions, then level0 RS
  fn equal(g) = if g >= groups() then 1 else if size(g) != size(0) then 0 else equal(g + 1)
  let L = size(group(r)), gr = group(r)
  if equal(0) {
    units p
    phase reduce_scatter within index(r) units b : { member(b, i) : i in 0 .. L - 1 } using level1
    phase reduce_scatter within group(r) units b : unit member(gr, b) using level0
  } else { phase reduce_scatter using ahc }
}

algorithm hier implements all_gather {                          # level0 AG, then level1 AG of the regions
  fn equal(g) = if g >= groups() then 1 else if size(g) != size(0) then 0 else equal(g + 1)
  let L = size(group(r)), gr = group(r)
  if equal(0) {
    units p
    phase all_gather within group(r) units b : unit member(gr, b) using level0
    phase all_gather within index(r) units b : { member(b, i) : i in 0 .. L - 1 } using level1
  } else { phase all_gather using ahc }
}

algorithm hier implements all_reduce {                          # level0 RS, level1 AR of my chunk, level0 AG
  fn equal(g) = if g >= groups() then 1 else if size(g) != size(0) then 0 else equal(g + 1)
  let S = groups(), l = index(r)
  if equal(0) {
    units p
    phase reduce_scatter within group(r) using level0
    phase all_reduce within index(r) units l * S .. l * S + S - 1 using level1
    phase all_gather within group(r) using level0
  } else { phase all_reduce using ahc }
}

algorithm hier implements broadcast {                           # level0 scatter, level1 broadcast, level0 AG
  fn equal(g) = if g >= groups() then 1 else if size(g) != size(0) then 0 else equal(g + 1)
  let S = groups(), l = index(r)
  if equal(0) {
    units p
    phase scatter within group(root) using level0               # the root's group only
    phase broadcast within index(r) root member(group(root), l) units l * S .. l * S + S - 1 using level1
    phase all_gather within group(r) using level0
  } else { phase broadcast using level1 }
}

algorithm hier implements reduce {                              # level0 RS, level1 reduce, level0 gather
  fn equal(g) = if g >= groups() then 1 else if size(g) != size(0) then 0 else equal(g + 1)
  let S = groups(), l = index(r)
  if equal(0) {
    units p
    phase reduce_scatter within group(r) using level0
    phase reduce within index(r) root member(group(root), l) units l * S .. l * S + S - 1 using level1
    phase gather within group(root) using level0                 # to the root, in its group
  } else { phase reduce using level1 }
}

algorithm hier implements scatter {                             # level1 scatter of the regions, level0 scatter
  fn equal(g) = if g >= groups() then 1 else if size(g) != size(0) then 0 else equal(g + 1)
  let L = size(group(r)), gr = group(r)
  if equal(0) {
    units p
    phase scatter within index(root) units b : { member(b, i) : i in 0 .. L - 1 } using level1
    phase scatter within group(r) root member(gr, index(root)) units b : unit member(gr, b) using level0
  } else { phase scatter using level1 }
}

algorithm hier implements gather {                              # level0 gather, level1 gather of the regions
  fn equal(g) = if g >= groups() then 1 else if size(g) != size(0) then 0 else equal(g + 1)
  let L = size(group(r)), gr = group(r)
  if equal(0) {
    units p
    phase gather within group(r) root member(gr, index(root)) units b : unit member(gr, b) using level0
    phase gather within index(root) units b : { member(b, i) : i in 0 .. L - 1 } using level1
  } else { phase gather using level1 }
}

# all_to_all (1.3: level0 AlltoAll, then level1 AlltoAll) for equal groups (else pairwise). Rank x = (s, l). Step 1, in the
# group: x sends peer y = (s, l') every block (x, j) with index(j) = l'; the one for y itself lands in y's output,
# the others are parked at y in scratch slot p*p + l*S + group(j). Step 2, among same-index ranks: y sends z =
# (s'', l') every block of group s for z, its own from its input and its peers' from scratch, into z's output.
# A block (x, j) with index(j) = l (j in another group) skips step 1; block (x, x) is the runtime's copy.
algorithm hier implements all_to_all {
  let S = groups(), L = size(group(r)), s = group(r), l = index(r)
  if uniform() {
    units p * p scratch p
    from { member(s, i) : i in 0 .. L - 1 }
    from { member(g, l) : g in 0 .. S - 1 }
    step {
      for i in 0 .. L - 1 {
        if i != l {
          send unit r * p + member(s, i) to member(s, i)
          for g in 0 .. S - 1 {
            if g != s { send unit r * p + member(g, i) to member(s, i) at unit p * p + l * S + g }
          }
        }
      }
    }
    step {
      for g in 0 .. S - 1 {
        if g != s {
          send unit r * p + member(g, l) to member(g, l)
          for i in 0 .. L - 1 {
            if i != l { send unit p * p + i * S + g to member(g, l) at unit member(s, i) * p + member(g, l) }
          }
        }
      }
    }
  } else { phase all_to_all using pairwise }                      # unequal groups: no same-index partners
}

# ---------------------------------------------------------------------------------------------------------------
# AHC, asymmetric hierarchical concatenate (spec 9): groups of any sizes m_g. Each group views the data as LCM
# segments, member x of a group of size m owning segments [x LCM/m, (x+1) LCM/m); the boundaries of all groups cut
# the segments into logical cards, and the G ranks whose ranges hold a card (one per group) are its logical
# same-index cards. Within groups: ahc_intra; across groups, one collective per card among its G members:
# ahc_inter (9.6: NB inside groups; Ring for up to 3 groups, else NB).
#
# 9.1.4's execution order, in global steps: the member x of group g runs the cards of its range by their offset
# from the start of their member of the smallest group (a range crossing a multiple c of w = LCM/m_min runs the
# cards past c first). A card starts in round `slot` = the latest place it has in its members' orders, which is
# when all of them are free if every card takes as long (the earliest start); a rank's cards get increasing rounds,
# so each rank still runs them in its order. Rounds with no card of mine see me sit out.

algorithm ahc_intra implements reduce_scatter { phase reduce_scatter using nb }
algorithm ahc_intra implements all_gather { phase all_gather using nb }
algorithm ahc_intra implements all_reduce { phase all_reduce using nb }
algorithm ahc_inter implements reduce_scatter {                 # p: the number of groups
  if p <= 3 { phase reduce_scatter using ring } else { phase reduce_scatter using nb }
}
algorithm ahc_inter implements all_gather {
  if p <= 3 { phase all_gather using ring } else { phase all_gather using nb }
}
algorithm ahc_inter implements all_reduce {
  if p <= 3 { phase all_reduce using ring } else { phase all_reduce using nb }
}

# All-reduce (9.2): LCM x G units; the card [s, e) of segments is units G s .. G e - 1.
algorithm ahc_align implements all_reduce {
  let G = groups()
  fn lcm_acc(g, a) = if g >= G then a else lcm_acc(g + 1, lcm(a, size(g)))
  fn lcm_from(g) = lcm_acc(g, 1)
  fn min_acc(g, a) = if g >= G then a else min_acc(g + 1, min(a, size(g)))
  fn min_from(g) = min_acc(g + 1, size(g))
  fn max_acc(g, a) = if g >= G then a else max_acc(g + 1, max(a, size(g)))
  fn max_from(g) = max_acc(g + 1, size(g))
  let L = lcm_from(0), w = L / min_from(0)
  fn d(g) = L / size(g)                                          # segments per member of group g
  fn next_acc(s, g, a) = if g >= G then a else next_acc(s, g + 1, min(a, (s / d(g) + 1) * d(g)))
  fn next_from(s, g) = next_acc(s, g, L)
  fn next(s) = next_from(s, 0)                                   # the end of the card that starts at s
  fn cards(a, b) = if a >= b then 0 else 1 + cards(next(a), b)   # cards in [a, b), a a boundary
  fn order(a, e, s) = if e <= (a / w + 1) * w then cards(a, s)   # place of card s in the order of range [a, e)
                      else if s >= (a / w + 1) * w then cards((a / w + 1) * w, s)
                      else cards((a / w + 1) * w, e) + cards(a, s)
  fn place(s, g) = order(s / d(g) * d(g), (s / d(g) + 1) * d(g), s)
  fn slot_acc(s, g, a) = if g >= G then a else slot_acc(s, g + 1, max(a, place(s, g)))
  fn slot_from(s, g) = slot_acc(s, g, 0)
  fn card_at(s, e, k) = if s >= e then -1 else if slot_from(s, 0) == k then s else card_at(next(s), e, k)
  fn has(m, g) = if g >= G then 0 else if size(g) == m then 1 else has(m, g + 1)   # some group has m members
  fn most_x(m, lo, hi) = if lo < hi then max(most_x(m, lo, (lo + hi) / 2), most_x(m, (lo + hi) / 2 + 1, hi))
                         else cards(lo * (L / m), (lo + 1) * (L / m))
  fn most(lo, hi) = if lo < hi then max(most(lo, (lo + hi) / 2), most((lo + hi) / 2 + 1, hi))
                    else if has(lo, 0) then most_x(lo, 0, lo - 1) else 0
  let gr = group(r), xr = index(r)
  units L * G
  phase reduce_scatter within group(r) using ahc_intra          # member x: units x G LCM/m .. (group-partial)
  for k in 0 .. most(1, max_from(0)) - 1 {                                 # rounds: the most cards a rank holds
    let s = card_at(xr * d(gr), (xr + 1) * d(gr), k)             # my card of round k, -1: none
    phase all_reduce within { member(h, s / d(h)) : h in 0 .. G - 1 if s >= 0 } units G * s .. G * next(s) - 1
          using ahc_inter
  }
  phase all_gather within group(r) using ahc_intra
}

# Reduce-scatter (9.4): p x LCM units, rank k's block k LCM .. (k + 1) LCM - 1. In group h's region (its members'
# blocks) segment t is the m_h units from seg(h, t). (Every piece below is a multiple of c = gcd of the sizes
# segments, so c segments make one unit: p x LCM / c units, the spec's p x LCM for coprime sizes.) The group's RS gives member b segments [b d, (b+1) d) of every
# region; a card's RS keeps region i's part of it at the member from group i, which makes up that rank's block.
algorithm ahc_align implements reduce_scatter {
  let G = groups()
  fn lcm_acc(g, a) = if g >= G then a else lcm_acc(g + 1, lcm(a, size(g)))
  fn lcm_from(g) = lcm_acc(g, 1)
  fn min_acc(g, a) = if g >= G then a else min_acc(g + 1, min(a, size(g)))
  fn min_from(g) = min_acc(g + 1, size(g))
  fn max_acc(g, a) = if g >= G then a else max_acc(g + 1, max(a, size(g)))
  fn max_from(g) = max_acc(g + 1, size(g))
  let L = lcm_from(0), w = L / min_from(0)
  fn d(g) = L / size(g)
  fn next_acc(s, g, a) = if g >= G then a else next_acc(s, g + 1, min(a, (s / d(g) + 1) * d(g)))
  fn next_from(s, g) = next_acc(s, g, L)
  fn next(s) = next_from(s, 0)
  fn cards(a, b) = if a >= b then 0 else 1 + cards(next(a), b)
  fn order(a, e, s) = if e <= (a / w + 1) * w then cards(a, s)
                      else if s >= (a / w + 1) * w then cards((a / w + 1) * w, s)
                      else cards((a / w + 1) * w, e) + cards(a, s)
  fn place(s, g) = order(s / d(g) * d(g), (s / d(g) + 1) * d(g), s)
  fn slot_acc(s, g, a) = if g >= G then a else slot_acc(s, g + 1, max(a, place(s, g)))
  fn slot_from(s, g) = slot_acc(s, g, 0)
  fn card_at(s, e, k) = if s >= e then -1 else if slot_from(s, 0) == k then s else card_at(next(s), e, k)
  fn has(m, g) = if g >= G then 0 else if size(g) == m then 1 else has(m, g + 1)   # some group has m members
  fn most_x(m, lo, hi) = if lo < hi then max(most_x(m, lo, (lo + hi) / 2), most_x(m, (lo + hi) / 2 + 1, hi))
                         else cards(lo * (L / m), (lo + 1) * (L / m))
  fn most(lo, hi) = if lo < hi then max(most(lo, (lo + hi) / 2), most((lo + hi) / 2 + 1, hi))
                    else if has(lo, 0) then most_x(lo, 0, lo - 1) else 0
  fn gcd_acc(g, a) = if g >= G then a else gcd_acc(g + 1, gcd(a, size(g)))
  fn gcd_from(g) = gcd_acc(g, 0)
  let c = gcd_from(0)                                            # c segments always travel together: one unit
  fn seg(h, t) = member(h, t / d(h)) * (L / c) + t % d(h) * (size(h) / c)  # segment t of group h's region
  let gr = group(r), xr = index(r)
  units p * L / c
  phase reduce_scatter within group(r)
        units b : { seg(v % G, v / G) .. seg(v % G, v / G) + size(v % G) / c - 1 : v in G * b * d(gr) .. G * (b + 1) * d(gr) - 1 }
        using ahc_intra
  for k in 0 .. most(1, max_from(0)) - 1 {
    let s = card_at(xr * d(gr), (xr + 1) * d(gr), k), n = if s >= 0 then next(s) - s else 0   # its length
    phase reduce_scatter within { member(h, s / d(h)) : h in 0 .. G - 1 if s >= 0 }
          units b : seg(b, s) .. seg(b, s) + n * size(b) / c - 1 using ahc_inter
  }
}

# All-gather (9.4): the reverse; every rank starts with its own block, which is its parts of its cards.
algorithm ahc_align implements all_gather {
  let G = groups()
  fn lcm_acc(g, a) = if g >= G then a else lcm_acc(g + 1, lcm(a, size(g)))
  fn lcm_from(g) = lcm_acc(g, 1)
  fn min_acc(g, a) = if g >= G then a else min_acc(g + 1, min(a, size(g)))
  fn min_from(g) = min_acc(g + 1, size(g))
  fn max_acc(g, a) = if g >= G then a else max_acc(g + 1, max(a, size(g)))
  fn max_from(g) = max_acc(g + 1, size(g))
  let L = lcm_from(0), w = L / min_from(0)
  fn d(g) = L / size(g)
  fn next_acc(s, g, a) = if g >= G then a else next_acc(s, g + 1, min(a, (s / d(g) + 1) * d(g)))
  fn next_from(s, g) = next_acc(s, g, L)
  fn next(s) = next_from(s, 0)
  fn cards(a, b) = if a >= b then 0 else 1 + cards(next(a), b)
  fn order(a, e, s) = if e <= (a / w + 1) * w then cards(a, s)
                      else if s >= (a / w + 1) * w then cards((a / w + 1) * w, s)
                      else cards((a / w + 1) * w, e) + cards(a, s)
  fn place(s, g) = order(s / d(g) * d(g), (s / d(g) + 1) * d(g), s)
  fn slot_acc(s, g, a) = if g >= G then a else slot_acc(s, g + 1, max(a, place(s, g)))
  fn slot_from(s, g) = slot_acc(s, g, 0)
  fn card_at(s, e, k) = if s >= e then -1 else if slot_from(s, 0) == k then s else card_at(next(s), e, k)
  fn has(m, g) = if g >= G then 0 else if size(g) == m then 1 else has(m, g + 1)   # some group has m members
  fn most_x(m, lo, hi) = if lo < hi then max(most_x(m, lo, (lo + hi) / 2), most_x(m, (lo + hi) / 2 + 1, hi))
                         else cards(lo * (L / m), (lo + 1) * (L / m))
  fn most(lo, hi) = if lo < hi then max(most(lo, (lo + hi) / 2), most((lo + hi) / 2 + 1, hi))
                    else if has(lo, 0) then most_x(lo, 0, lo - 1) else 0
  fn gcd_acc(g, a) = if g >= G then a else gcd_acc(g + 1, gcd(a, size(g)))
  fn gcd_from(g) = gcd_acc(g, 0)
  let c = gcd_from(0)
  fn seg(h, t) = member(h, t / d(h)) * (L / c) + t % d(h) * (size(h) / c)
  let gr = group(r), xr = index(r)
  units p * L / c
  for k in 0 .. most(1, max_from(0)) - 1 {
    let s = card_at(xr * d(gr), (xr + 1) * d(gr), k), n = if s >= 0 then next(s) - s else 0
    phase all_gather within { member(h, s / d(h)) : h in 0 .. G - 1 if s >= 0 }
          units b : seg(b, s) .. seg(b, s) + n * size(b) / c - 1 using ahc_inter
  }
  phase all_gather within group(r)
        units b : { seg(v % G, v / G) .. seg(v % G, v / G) + size(v % G) / c - 1 : v in G * b * d(gr) .. G * (b + 1) * d(gr) - 1 }
        using ahc_intra
}

# AHC_BROKE (9.5), all-reduce: no LCM. Every group cuts the vector into m_min chunks of G units; members below
# m_min get one each, the others only contribute; the same-index members below m_min all-reduce their chunk.
algorithm ahc_broke implements all_reduce {
  let G = groups()
  fn min_acc(g, a) = if g >= G then a else min_acc(g + 1, min(a, size(g)))
  fn min_from(g) = min_acc(g + 1, size(g))
  let mmin = min_from(0), xr = index(r)
  units mmin * G
  phase reduce_scatter within group(r) units b : b * G .. (if b < mmin then b * G + G - 1 else -1) using ahc_intra
  phase all_reduce within { member(h, xr) : h in 0 .. G - 1 if xr < mmin } units xr * G .. xr * G + G - 1
        using ahc_inter
  phase all_gather within group(r) units b : b * G .. (if b < mmin then b * G + G - 1 else -1) using ahc_intra
}

# Reduce-scatter and all-gather BROKE (9.5): chunk c (the block of every group's member c) is reduced across the
# groups by {member(g, c mod m_g)}; a group without a member c adds nothing. A member y of a group of m takes part
# for every c = y mod m, so inside its group it first collects the blocks of all ranks of index y mod m (member b
# gets member(h, b), member(h, b + m), ... of every group h). Chunk c
# runs in round c / m_min: a rank's chunks are at least m_min apart, so a round never holds two of them.
algorithm ahc_broke implements reduce_scatter {
  let G = groups()
  fn min_acc(g, a) = if g >= G then a else min_acc(g + 1, min(a, size(g)))
  fn min_from(g) = min_acc(g + 1, size(g))
  fn max_acc(g, a) = if g >= G then a else max_acc(g + 1, max(a, size(g)))
  fn max_from(g) = max_acc(g + 1, size(g))
  let mmin = min_from(0), mmax = max_from(0), m = size(group(r)), y = index(r)
  units p
  phase reduce_scatter within group(r) units b : { member(v % G, b + v / G * m) : v in 0 .. G * ((mmax + m - 1) / m) - 1 if b + v / G * m < size(v % G) } using ahc_intra
  for t in 0 .. (mmax + mmin - 1) / mmin - 1 {
    let c = t * mmin + (y - t * mmin) % m                        # my chunk of round t
    phase reduce_scatter within { member(h, c % size(h)) : h in 0 .. G - 1 if c < t * mmin + mmin and c < mmax }
          units b : { member(b, c) : i in 0 .. 0 if c < size(b) } using ahc_inter
  }
}

algorithm ahc_broke implements all_gather {
  let G = groups()
  fn min_acc(g, a) = if g >= G then a else min_acc(g + 1, min(a, size(g)))
  fn min_from(g) = min_acc(g + 1, size(g))
  fn max_acc(g, a) = if g >= G then a else max_acc(g + 1, max(a, size(g)))
  fn max_from(g) = max_acc(g + 1, size(g))
  let mmin = min_from(0), mmax = max_from(0), m = size(group(r)), y = index(r)
  units p
  for t in 0 .. (mmax + mmin - 1) / mmin - 1 {
    let c = t * mmin + (y - t * mmin) % m
    phase all_gather within { member(h, c % size(h)) : h in 0 .. G - 1 if c < t * mmin + mmin and c < mmax }
          units b : { member(b, c) : i in 0 .. 0 if c < size(b) } using ahc_inter
  }
  phase all_gather within group(r) units b : { member(v % G, b + v / G * m) : v in 0 .. G * ((mmax + m - 1) / m) - 1 if b + v / G * m < size(v % G) } using ahc_intra
}

# AHC as HCCL_ALGO's "AHC" asks for it (9.6): BROKE when the group sizes share a factor (gcd > 1), and for
# all-reduce also when the groups are nearly equal ((m_max - m_min) / m_min < 0.05); else the LCM alignment.
algorithm ahc implements all_reduce {
  let G = groups()
  fn gcd_acc(g, a) = if g >= G then a else gcd_acc(g + 1, gcd(a, size(g)))
  fn gcd_from(g) = gcd_acc(g, 0)
  fn min_acc(g, a) = if g >= G then a else min_acc(g + 1, min(a, size(g)))
  fn min_from(g) = min_acc(g + 1, size(g))
  fn max_acc(g, a) = if g >= G then a else max_acc(g + 1, max(a, size(g)))
  fn max_from(g) = max_acc(g + 1, size(g))
  if gcd_from(0) > 1 or 20 * (max_from(0) - min_from(0)) < min_from(0) { phase all_reduce using ahc_broke }
  else { phase all_reduce using ahc_align }
}

algorithm ahc implements reduce_scatter {
  let G = groups()
  fn gcd_acc(g, a) = if g >= G then a else gcd_acc(g + 1, gcd(a, size(g)))
  fn gcd_from(g) = gcd_acc(g, 0)
  if gcd_from(0) > 1 { phase reduce_scatter using ahc_broke } else { phase reduce_scatter using ahc_align }
}

algorithm ahc implements all_gather {
  let G = groups()
  fn gcd_acc(g, a) = if g >= G then a else gcd_acc(g + 1, gcd(a, size(g)))
  fn gcd_from(g) = gcd_acc(g, 0)
  if gcd_from(0) > 1 { phase all_gather using ahc_broke } else { phase all_gather using ahc_align }
}

# ---------------------------------------------------------------------------------------------------------------
# Two-dimension Mesh + NHR (spec 10): S equal groups of L ranks; the data is cut into two parts by the split ratio
# R that run side by side, each in its own lane: part 0 Mesh inside the group, then NHR among the same-index
# ranks; part 1 NHR first, then Mesh. Every split below is one of the spec's phases (both parts at once), and the
# split's end is the barrier between phases. R is rounded down to fortieths (so eighths, 12.3's formula, and
# tenths are exact), floor(40 R) / 40 = a / Q in lowest terms: each rank's chunk (its block, or for one-block
# collectives a p-th of the vector) is Q units, of which a = split_ratio(Q) go to the part R names (12.4): part 0
# for reduce_scatter, all_reduce, broadcast and reduce, part 1 (NHR first) for all_gather. R = 0.5 gives Q = 2,
# 0.3 gives Q = 10, 0 and 1 give Q = 1 and an empty lane. Chunk (g, i) is rank member(g, i)'s.

algorithm mesh_nhr_2d implements reduce_scatter {
  require uniform()
  let Q = 40 / gcd(split_ratio(40), 40), S = groups(), L = size(0), g = group(r), l = index(r), a = split_ratio(Q)
  units Q * p
  split {
    lane { b * Q .. b * Q + a - 1 : b in 0 .. p - 1 } {          # part 0: Mesh RS of every group's chunk (., l')
      phase reduce_scatter within group(r) units k : { member(h, k) * Q .. member(h, k) * Q + a - 1 : h in 0 .. S - 1 } using mesh
    }
    lane { b * Q + a .. b * Q + Q - 1 : b in 0 .. p - 1 } {      # part 1: NHR RS of every group's chunks
      phase reduce_scatter within index(r) units h : { member(h, i) * Q + a .. member(h, i) * Q + Q - 1 : i in 0 .. L - 1 } using nhr
    }
  }
  split {
    lane { b * Q .. b * Q + a - 1 : b in 0 .. p - 1 } {          # part 0: NHR RS of chunks (., l)
      phase reduce_scatter within index(r) units h : member(h, l) * Q .. member(h, l) * Q + a - 1 using nhr
    }
    lane { b * Q + a .. b * Q + Q - 1 : b in 0 .. p - 1 } {      # part 1: Mesh RS of chunks (g, .)
      phase reduce_scatter within group(r) units k : member(g, k) * Q + a .. member(g, k) * Q + Q - 1 using mesh
    }
  }
}

algorithm mesh_nhr_2d implements all_gather {                    # the reverse; part 1 (NHR first) gets R
  require uniform()
  let Q = 40 / gcd(split_ratio(40), 40), S = groups(), L = size(0), g = group(r), l = index(r), a = Q - split_ratio(Q)
  units Q * p
  split {
    lane { b * Q .. b * Q + a - 1 : b in 0 .. p - 1 } {          # part 0: Mesh AG of my group's chunks
      phase all_gather within group(r) units k : member(g, k) * Q .. member(g, k) * Q + a - 1 using mesh
    }
    lane { b * Q + a .. b * Q + Q - 1 : b in 0 .. p - 1 } {      # part 1: NHR AG of chunks (., l)
      phase all_gather within index(r) units h : member(h, l) * Q + a .. member(h, l) * Q + Q - 1 using nhr
    }
  }
  split {
    lane { b * Q .. b * Q + a - 1 : b in 0 .. p - 1 } {          # part 0: NHR AG of whole groups
      phase all_gather within index(r) units h : { member(h, i) * Q .. member(h, i) * Q + a - 1 : i in 0 .. L - 1 } using nhr
    }
    lane { b * Q + a .. b * Q + Q - 1 : b in 0 .. p - 1 } {      # part 1: Mesh AG of chunks (., l') per index
      phase all_gather within group(r) units k : { member(h, k) * Q + a .. member(h, k) * Q + Q - 1 : h in 0 .. S - 1 } using mesh
    }
  }
}

# One-block collectives: part 0 is units 0 .. a p - 1 (chunk x: x a .. x a + a - 1), part 1 the rest (chunk x:
# a p + x c .. a p + x c + c - 1, c = Q - a). all_reduce: four phases (10): RS, RS, AG, AG.
algorithm mesh_nhr_2d implements all_reduce {
  require uniform()
  let Q = 40 / gcd(split_ratio(40), 40), S = groups(), L = size(0), g = group(r), l = index(r), a = split_ratio(Q), c = Q - a, o = a * p
  units Q * p
  split {
    lane 0 .. o - 1 { phase reduce_scatter within group(r) units k : { member(h, k) * a .. member(h, k) * a + a - 1 : h in 0 .. S - 1 } using mesh }
    lane o .. Q * p - 1 { phase reduce_scatter within index(r) units h : { o + member(h, i) * c .. o + member(h, i) * c + c - 1 : i in 0 .. L - 1 } using nhr }
  }
  split {
    lane 0 .. o - 1 { phase reduce_scatter within index(r) units h : member(h, l) * a .. member(h, l) * a + a - 1 using nhr }
    lane o .. Q * p - 1 { phase reduce_scatter within group(r) units k : o + member(g, k) * c .. o + member(g, k) * c + c - 1 using mesh }
  }
  split {
    lane 0 .. o - 1 { phase all_gather within index(r) units h : member(h, l) * a .. member(h, l) * a + a - 1 using nhr }
    lane o .. Q * p - 1 { phase all_gather within group(r) units k : o + member(g, k) * c .. o + member(g, k) * c + c - 1 using mesh }
  }
  split {
    lane 0 .. o - 1 { phase all_gather within group(r) units k : { member(h, k) * a .. member(h, k) * a + a - 1 : h in 0 .. S - 1 } using mesh }
    lane o .. Q * p - 1 { phase all_gather within index(r) units h : { o + member(h, i) * c .. o + member(h, i) * c + c - 1 : i in 0 .. L - 1 } using nhr }
  }
}

# Broadcast (scatter type): the two parts scatter from the root (part 0: Mesh in the root's group, then NHR from
# each of its members; part 1: NHR among the root's index, then Mesh in every group), then gather back with AG.
algorithm mesh_nhr_2d implements broadcast {
  require uniform()
  let Q = 40 / gcd(split_ratio(40), 40), S = groups(), L = size(0), g = group(r), l = index(r), a = split_ratio(Q), c = Q - a, o = a * p
  let gr = group(root), lr = index(root)
  units Q * p
  split {
    lane 0 .. o - 1 { phase scatter within group(root) units k : { member(h, k) * a .. member(h, k) * a + a - 1 : h in 0 .. S - 1 } using mesh }
    lane o .. Q * p - 1 { phase scatter within index(root) units h : { o + member(h, i) * c .. o + member(h, i) * c + c - 1 : i in 0 .. L - 1 } using nhr }
  }
  split {
    lane 0 .. o - 1 { phase scatter within index(r) root member(gr, l) units h : member(h, l) * a .. member(h, l) * a + a - 1 using nhr }
    lane o .. Q * p - 1 { phase scatter within group(r) root member(g, lr) units k : o + member(g, k) * c .. o + member(g, k) * c + c - 1 using mesh }
  }
  split {
    lane 0 .. o - 1 { phase all_gather within index(r) units h : member(h, l) * a .. member(h, l) * a + a - 1 using nhr }
    lane o .. Q * p - 1 { phase all_gather within group(r) units k : o + member(g, k) * c .. o + member(g, k) * c + c - 1 using mesh }
  }
  split {
    lane 0 .. o - 1 { phase all_gather within group(r) units k : { member(h, k) * a .. member(h, k) * a + a - 1 : h in 0 .. S - 1 } using mesh }
    lane o .. Q * p - 1 { phase all_gather within index(r) units h : { o + member(h, i) * c .. o + member(h, i) * c + c - 1 : i in 0 .. L - 1 } using nhr }
  }
}

# Reduce (reduce-scatter type): all_reduce's two RS phases, then each part gathers its pieces back to the root
# along its path reversed. stitch has no NHR gather; the gathers among same-index ranks use level1's (ring).
algorithm mesh_nhr_2d implements reduce {
  require uniform()
  let Q = 40 / gcd(split_ratio(40), 40), S = groups(), L = size(0), g = group(r), l = index(r), a = split_ratio(Q), c = Q - a, o = a * p
  let gr = group(root), lr = index(root)
  units Q * p
  split {
    lane 0 .. o - 1 { phase reduce_scatter within group(r) units k : { member(h, k) * a .. member(h, k) * a + a - 1 : h in 0 .. S - 1 } using mesh }
    lane o .. Q * p - 1 { phase reduce_scatter within index(r) units h : { o + member(h, i) * c .. o + member(h, i) * c + c - 1 : i in 0 .. L - 1 } using nhr }
  }
  split {
    lane 0 .. o - 1 { phase reduce_scatter within index(r) units h : member(h, l) * a .. member(h, l) * a + a - 1 using nhr }
    lane o .. Q * p - 1 { phase reduce_scatter within group(r) units k : o + member(g, k) * c .. o + member(g, k) * c + c - 1 using mesh }
  }
  split {
    lane 0 .. o - 1 { phase gather within index(r) root member(gr, l) units h : member(h, l) * a .. member(h, l) * a + a - 1 using level1 }
    lane o .. Q * p - 1 { phase gather within group(r) root member(g, lr) units k : o + member(g, k) * c .. o + member(g, k) * c + c - 1 using mesh }
  }
  split {
    lane 0 .. o - 1 { phase gather within group(root) units k : { member(h, k) * a .. member(h, k) * a + a - 1 : h in 0 .. S - 1 } using mesh }
    lane o .. Q * p - 1 { phase gather within index(root) units h : { o + member(h, i) * c .. o + member(h, i) * c + c - 1 : i in 0 .. L - 1 } using level1 }
  }
}
