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
  step t in 0 .. p - 2 {
    send unit (r - 1 - t) % p to (r + 1) % p reduce
  }
}

# Each rank forwards the unit it received in the previous step.
algorithm ring implements all_gather {
  units p
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
  units p
  step {
    for t in 1 .. p - 1 {
      send unit (r + t) % p to (r + t) % p reduce
    }
  }
}

algorithm mesh implements all_gather {
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
