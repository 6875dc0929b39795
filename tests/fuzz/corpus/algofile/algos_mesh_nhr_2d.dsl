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
algorithm mesh implements all_to_all {
  from all
  units p * p
  step { for t in 1 .. p - 1 { send unit r * p + (r + t) % p to (r + t) % p } }
}
algorithm nhr implements reduce_scatter {
  units p
  from { (r + pow2(k)) % p : k in 0 .. ceil_log2(p) - 1 }
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
algorithm nhr implements all_reduce {
  fn move(x, len) = if x % len % 2 == 0 then x - x % len + x % len / 2 else x - x % len + (x % len + len) / 2
  fn odd(len) = len % 2 == 1 or p % len % 2 == 1
  fn place(x, k, len) = if k >= ceil_log2(p) or (p - 1 + pow2(k)) / pow2(k + 1) <= 1 then x
                        else if odd(len) then move(x, len)
                        else place(move(x, len), k + 1, len / 2)
  fn sigma(u) = place(u, 0, p)
  units p
  layout sigma
  phase reduce_scatter using nhr
  phase all_gather using nhr
}
algorithm nhr implements broadcast {
  fn move(x, len) = if x % len % 2 == 0 then x - x % len + x % len / 2 else x - x % len + (x % len + len) / 2
  fn odd(len) = len % 2 == 1 or p % len % 2 == 1
  fn place(x, k, len) = if k >= ceil_log2(p) or (p - 1 + pow2(k)) / pow2(k + 1) <= 1 then x
                        else if odd(len) then move(x, len)
                        else place(move(x, len), k + 1, len / 2)
  fn sigma(u) = place(u, 0, p)
  units p
  layout sigma
  phase scatter using nhr
  phase all_gather using nhr
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
algorithm mesh_nhr_2d implements reduce_scatter {
  require uniform()
  let Q = 40 / gcd(split_ratio(40), 40), S = groups(), L = size(0), g = group(r), l = index(r), a = split_ratio(Q)
  units Q * p
  split {
    lane { b * Q .. b * Q + a - 1 : b in 0 .. p - 1 } {
      phase reduce_scatter within group(r) units k : { member(h, k) * Q .. member(h, k) * Q + a - 1 : h in 0 .. S - 1 } using mesh
    }
    lane { b * Q + a .. b * Q + Q - 1 : b in 0 .. p - 1 } {
      phase reduce_scatter within index(r) units h : { member(h, i) * Q + a .. member(h, i) * Q + Q - 1 : i in 0 .. L - 1 } using nhr
    }
  }
  split {
    lane { b * Q .. b * Q + a - 1 : b in 0 .. p - 1 } {
      phase reduce_scatter within index(r) units h : member(h, l) * Q .. member(h, l) * Q + a - 1 using nhr
    }
    lane { b * Q + a .. b * Q + Q - 1 : b in 0 .. p - 1 } {
      phase reduce_scatter within group(r) units k : member(g, k) * Q + a .. member(g, k) * Q + Q - 1 using mesh
    }
  }
}
algorithm mesh_nhr_2d implements all_gather {
  require uniform()
  let Q = 40 / gcd(split_ratio(40), 40), S = groups(), L = size(0), g = group(r), l = index(r), a = Q - split_ratio(Q)
  units Q * p
  split {
    lane { b * Q .. b * Q + a - 1 : b in 0 .. p - 1 } {
      phase all_gather within group(r) units k : member(g, k) * Q .. member(g, k) * Q + a - 1 using mesh
    }
    lane { b * Q + a .. b * Q + Q - 1 : b in 0 .. p - 1 } {
      phase all_gather within index(r) units h : member(h, l) * Q + a .. member(h, l) * Q + Q - 1 using nhr
    }
  }
  split {
    lane { b * Q .. b * Q + a - 1 : b in 0 .. p - 1 } {
      phase all_gather within index(r) units h : { member(h, i) * Q .. member(h, i) * Q + a - 1 : i in 0 .. L - 1 } using nhr
    }
    lane { b * Q + a .. b * Q + Q - 1 : b in 0 .. p - 1 } {
      phase all_gather within group(r) units k : { member(h, k) * Q + a .. member(h, k) * Q + Q - 1 : h in 0 .. S - 1 } using mesh
    }
  }
}
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
