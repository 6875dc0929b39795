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
