algorithm rhd implements all_reduce {
  let m = floor_log2(p), B = pow2(m), extra = p - B
  fn block(x) = if x < 2 * extra then x / 2 else x - extra
  fn rank_of(b) = if b < extra then 2 * b else b + extra
  let inside = r >= 2 * extra or r % 2 == 0
  units B
  from { rank_of(block(r) ^ pow2(s)) : s in 0 .. m - 1 if inside }
  from { r ^ 1 : i in 0 .. 0 if r < 2 * extra }
  if extra > 0 {
    step { if not inside { send all to r - 1 reduce } }
  }
  for s in 0 .. m - 1 {
    step { if inside {
      let mask = pow2(m - 1 - s), q = block(r) ^ mask, lo = q & ~(mask - 1)
      send lo .. lo + mask - 1 to rank_of(q) reduce
    } }
  }
  for s in 0 .. m - 1 {
    step { if inside {
      let mask = pow2(s), q = block(r) ^ mask, lo = block(r) & ~(mask - 1)
      send lo .. lo + mask - 1 to rank_of(q)
    } }
  }
  if extra > 0 {
    step { if r < 2 * extra and r % 2 == 0 { send all to r + 1 } }
  }
}
algorithm rhd implements reduce_scatter {
  let m = floor_log2(p), B = pow2(m), extra = p - B
  fn block(x) = if x < 2 * extra then x / 2 else x - extra
  fn rank_of(b) = if b < extra then 2 * b else b + extra
  fn first(b) = if b < extra then 2 * b else b + extra
  fn last(b) = if b < extra then 2 * b + 1 else b + extra
  let inside = r >= 2 * extra or r % 2 == 0
  units p
  from { rank_of(block(r) ^ pow2(s)) : s in 0 .. m - 1 if inside }
  from { r ^ 1 : i in 0 .. 0 if r < 2 * extra }
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
    step { if r < 2 * extra and r % 2 == 0 { send unit r + 1 to r + 1 } }
  }
}
algorithm rhd implements all_gather {
  let m = floor_log2(p), B = pow2(m), extra = p - B
  fn block(x) = if x < 2 * extra then x / 2 else x - extra
  fn rank_of(b) = if b < extra then 2 * b else b + extra
  fn first(b) = if b < extra then 2 * b else b + extra
  fn last(b) = if b < extra then 2 * b + 1 else b + extra
  let inside = r >= 2 * extra or r % 2 == 0
  units p
  from { rank_of(block(r) ^ pow2(s)) : s in 0 .. m - 1 if inside }
  from { r ^ 1 : i in 0 .. 0 if r < 2 * extra }
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
algorithm rhd implements broadcast {
  let m = floor_log2(p), B = pow2(m), extra = p - B
  let par = if root < 2 * extra then root % 2 else 0
  fn inside(x) = x >= 2 * extra or x % 2 == par
  fn block(x) = if x < 2 * extra then x / 2 else x - extra
  fn rank_of(b) = if b < extra then 2 * b + par else b + extra
  units 1
  from { rank_of(block(r) ^ pow2(s)) : s in 0 .. m - 1 if inside(r) }
  from { r ^ 1 : i in 0 .. 0 if r < 2 * extra }
  for i in 0 .. m - 1 {
    let mask = pow2(m - 1 - i)
    step { if inside(r) and (block(r) ^ block(root)) & (2 * mask - 1) == 0 {
      send all to rank_of(block(r) ^ mask)
    } }
  }
  if extra > 0 {
    step { if inside(r) and r < 2 * extra { send all to r ^ 1 } }
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
    step { if not inside(r) { send all to r ^ 1 reduce } }
  }
  for s in 0 .. m - 1 {
    step { if inside(r) {
      let mask = pow2(m - 1 - s), q = block(r) ^ mask, lo = q & ~(mask - 1)
      send lo .. lo + mask - 1 to rank_of(q) reduce
    } }
  }
  for s in 0 .. m - 1 {
    let mask = pow2(s)
    step { if inside(r) and (block(r) ^ block(root)) & (2 * mask - 1) == mask {
      let lo = block(r) & ~(mask - 1)
      send lo .. lo + mask - 1 to rank_of(block(r) ^ mask)
    } }
  }
}
algorithm ring implements reduce_scatter {
  units p
  from { (r - 1) % p }
  step t in 0 .. p - 2 {
    send unit (r - 1 - t) % p to (r + 1) % p reduce
  }
}
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
algorithm ring implements broadcast {
  units p
  from { (r - 1) % p }
  let delta = (r - root) % p
  step t in 0 .. 2 * p - 3 {
    if delta <= p - 2 and t - delta >= 0 and t - delta <= p - 1 {
      send unit t - delta to (r + 1) % p
    }
  }
}
algorithm ring implements reduce {
  units p
  from { (r - 1) % p }
  let e = (r - root - 1) % p
  step t in 0 .. 2 * p - 3 {
    if e <= p - 2 and t - e >= 0 and t - e <= p - 1 {
      send unit t - e to (r + 1) % p reduce
    }
  }
}
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
