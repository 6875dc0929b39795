# Ring reduce-scatter: after p-1 steps rank r holds the full sum of unit r.
algorithm ring implements reduce_scatter {
  units p
  step k in 0 .. p - 2 {
    send unit (r - k - 1) % p to (r + 1) % p reduce
  }
}
algorithm rhd implements all_reduce {
  let m = floor_log2(p), B = pow2(m), extra = p - B
  fn block(x) = if x < 2 * extra then x / 2 else x - extra
  units B
  step { if not (r >= 2 * extra or r % 2 == 0) { send all to r - 1 reduce } }
  for s in 0 .. m - 1 {
    step { if r >= 2 * extra or r % 2 == 0 {
      let mask = pow2(m - 1 - s), q = block(r) ^ mask
      send { u : u in 0 .. B - 1 if (u & mask) == (q & mask) } to q reduce
    } else { } }
  }
  phase all_gather using ring
}
