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
algorithm level0 implements reduce_scatter { phase reduce_scatter using mesh }
algorithm level0 implements all_gather { phase all_gather using mesh }
algorithm level0 implements all_reduce { phase all_reduce using mesh }
algorithm level0 implements broadcast { phase broadcast using mesh }
algorithm level0 implements reduce { phase reduce using mesh }
algorithm level0 implements scatter { phase scatter using mesh }
algorithm level0 implements gather { phase gather using mesh }
algorithm ahc implements all_reduce {
  let G = groups()
  fn gcd_from(g) = if g >= G then 0 else gcd(size(g), gcd_from(g + 1))
  fn min_from(g) = if g >= G - 1 then size(g) else min(size(g), min_from(g + 1))
  fn max_from(g) = if g >= G - 1 then size(g) else max(size(g), max_from(g + 1))
  if gcd_from(0) > 1 or 20 * (max_from(0) - min_from(0)) < min_from(0) { phase all_reduce using ahc_broke }
  else { phase all_reduce using ahc_align }
}
algorithm ahc implements reduce_scatter {
  let G = groups()
  fn gcd_from(g) = if g >= G then 0 else gcd(size(g), gcd_from(g + 1))
  if gcd_from(0) > 1 { phase reduce_scatter using ahc_broke } else { phase reduce_scatter using ahc_align }
}
algorithm ahc implements all_gather {
  let G = groups()
  fn gcd_from(g) = if g >= G then 0 else gcd(size(g), gcd_from(g + 1))
  if gcd_from(0) > 1 { phase all_gather using ahc_broke } else { phase all_gather using ahc_align }
}
algorithm pairwise implements all_to_all, all_to_all_v {
  units p * p
  from all
  step i in 1 .. p - 1 { send unit r * p + (r + i) % p to (r + i) % p }
}
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
algorithm ahc_broke implements all_reduce {
  let G = groups()
  fn min_from(g) = if g >= G - 1 then size(g) else min(size(g), min_from(g + 1))
  let mmin = min_from(0), xr = index(r)
  units mmin * G
  phase reduce_scatter within group(r) units b : b * G .. (if b < mmin then b * G + G - 1 else -1) using ahc_intra
  phase all_reduce within { member(h, xr) : h in 0 .. G - 1 if xr < mmin } units xr * G .. xr * G + G - 1
        using ahc_inter
  phase all_gather within group(r) units b : b * G .. (if b < mmin then b * G + G - 1 else -1) using ahc_intra
}
algorithm ahc_broke implements reduce_scatter {
  let G = groups()
  fn min_from(g) = if g >= G - 1 then size(g) else min(size(g), min_from(g + 1))
  fn max_from(g) = if g >= G - 1 then size(g) else max(size(g), max_from(g + 1))
  let mmin = min_from(0), mmax = max_from(0), m = size(group(r)), y = index(r)
  units p
  phase reduce_scatter within group(r) units b : { member(v % G, b + v / G * m) : v in 0 .. G * ((mmax + m - 1) / m) - 1 if b + v / G * m < size(v % G) } using ahc_intra
  for t in 0 .. (mmax + mmin - 1) / mmin - 1 {
    let c = t * mmin + (y - t * mmin) % m
    phase reduce_scatter within { member(h, c % size(h)) : h in 0 .. G - 1 if c < t * mmin + mmin and c < mmax }
          units b : { member(b, c) : i in 0 .. 0 if c < size(b) } using ahc_inter
  }
}
algorithm ahc_broke implements all_gather {
  let G = groups()
  fn min_from(g) = if g >= G - 1 then size(g) else min(size(g), min_from(g + 1))
  fn max_from(g) = if g >= G - 1 then size(g) else max(size(g), max_from(g + 1))
  let mmin = min_from(0), mmax = max_from(0), m = size(group(r)), y = index(r)
  units p
  for t in 0 .. (mmax + mmin - 1) / mmin - 1 {
    let c = t * mmin + (y - t * mmin) % m
    phase all_gather within { member(h, c % size(h)) : h in 0 .. G - 1 if c < t * mmin + mmin and c < mmax }
          units b : { member(b, c) : i in 0 .. 0 if c < size(b) } using ahc_inter
  }
  phase all_gather within group(r) units b : { member(v % G, b + v / G * m) : v in 0 .. G * ((mmax + m - 1) / m) - 1 if b + v / G * m < size(v % G) } using ahc_intra
}
algorithm ahc_align implements all_reduce {
  let G = groups()
  fn lcm_from(g) = if g >= G then 1 else lcm(size(g), lcm_from(g + 1))
  fn min_from(g) = if g >= G - 1 then size(g) else min(size(g), min_from(g + 1))
  fn max_from(g) = if g >= G - 1 then size(g) else max(size(g), max_from(g + 1))
  let L = lcm_from(0), w = L / min_from(0)
  fn d(g) = L / size(g)
  fn next_from(s, g) = if g >= G then L else min((s / d(g) + 1) * d(g), next_from(s, g + 1))
  fn next(s) = next_from(s, 0)
  fn cards(a, b) = if a >= b then 0 else 1 + cards(next(a), b)
  fn order(a, e, s) = if e <= (a / w + 1) * w then cards(a, s)
                      else if s >= (a / w + 1) * w then cards((a / w + 1) * w, s)
                      else cards((a / w + 1) * w, e) + cards(a, s)
  fn place(s, g) = order(s / d(g) * d(g), (s / d(g) + 1) * d(g), s)
  fn slot_from(s, g) = if g >= G then 0 else max(place(s, g), slot_from(s, g + 1))
  fn card_at(s, e, k) = if s >= e then -1 else if slot_from(s, 0) == k then s else card_at(next(s), e, k)
  fn has(m, g) = g < G and (size(g) == m or has(m, g + 1))
  fn most_x(m, lo, hi) = if lo < hi then max(most_x(m, lo, (lo + hi) / 2), most_x(m, (lo + hi) / 2 + 1, hi))
                         else cards(lo * (L / m), (lo + 1) * (L / m))
  fn most(lo, hi) = if lo < hi then max(most(lo, (lo + hi) / 2), most((lo + hi) / 2 + 1, hi))
                    else if has(lo, 0) then most_x(lo, 0, lo - 1) else 0
  let gr = group(r), xr = index(r)
  units L * G
  phase reduce_scatter within group(r) using ahc_intra
  for k in 0 .. most(1, max_from(0)) - 1 {
    let s = card_at(xr * d(gr), (xr + 1) * d(gr), k)
    phase all_reduce within { member(h, s / d(h)) : h in 0 .. G - 1 if s >= 0 } units G * s .. G * next(s) - 1
          using ahc_inter
  }
  phase all_gather within group(r) using ahc_intra
}
algorithm ahc_align implements reduce_scatter {
  let G = groups()
  fn lcm_from(g) = if g >= G then 1 else lcm(size(g), lcm_from(g + 1))
  fn min_from(g) = if g >= G - 1 then size(g) else min(size(g), min_from(g + 1))
  fn max_from(g) = if g >= G - 1 then size(g) else max(size(g), max_from(g + 1))
  let L = lcm_from(0), w = L / min_from(0)
  fn d(g) = L / size(g)
  fn next_from(s, g) = if g >= G then L else min((s / d(g) + 1) * d(g), next_from(s, g + 1))
  fn next(s) = next_from(s, 0)
  fn cards(a, b) = if a >= b then 0 else 1 + cards(next(a), b)
  fn order(a, e, s) = if e <= (a / w + 1) * w then cards(a, s)
                      else if s >= (a / w + 1) * w then cards((a / w + 1) * w, s)
                      else cards((a / w + 1) * w, e) + cards(a, s)
  fn place(s, g) = order(s / d(g) * d(g), (s / d(g) + 1) * d(g), s)
  fn slot_from(s, g) = if g >= G then 0 else max(place(s, g), slot_from(s, g + 1))
  fn card_at(s, e, k) = if s >= e then -1 else if slot_from(s, 0) == k then s else card_at(next(s), e, k)
  fn has(m, g) = g < G and (size(g) == m or has(m, g + 1))
  fn most_x(m, lo, hi) = if lo < hi then max(most_x(m, lo, (lo + hi) / 2), most_x(m, (lo + hi) / 2 + 1, hi))
                         else cards(lo * (L / m), (lo + 1) * (L / m))
  fn most(lo, hi) = if lo < hi then max(most(lo, (lo + hi) / 2), most((lo + hi) / 2 + 1, hi))
                    else if has(lo, 0) then most_x(lo, 0, lo - 1) else 0
  fn gcd_from(g) = if g >= G then 0 else gcd(size(g), gcd_from(g + 1))
  let c = gcd_from(0)
  fn seg(h, t) = member(h, t / d(h)) * (L / c) + t % d(h) * (size(h) / c)
  let gr = group(r), xr = index(r)
  units p * L / c
  phase reduce_scatter within group(r)
        units b : { seg(v % G, v / G) .. seg(v % G, v / G) + size(v % G) / c - 1 : v in G * b * d(gr) .. G * (b + 1) * d(gr) - 1 }
        using ahc_intra
  for k in 0 .. most(1, max_from(0)) - 1 {
    let s = card_at(xr * d(gr), (xr + 1) * d(gr), k), n = if s >= 0 then next(s) - s else 0
    phase reduce_scatter within { member(h, s / d(h)) : h in 0 .. G - 1 if s >= 0 }
          units b : seg(b, s) .. seg(b, s) + n * size(b) / c - 1 using ahc_inter
  }
}
algorithm ahc_align implements all_gather {
  let G = groups()
  fn lcm_from(g) = if g >= G then 1 else lcm(size(g), lcm_from(g + 1))
  fn min_from(g) = if g >= G - 1 then size(g) else min(size(g), min_from(g + 1))
  fn max_from(g) = if g >= G - 1 then size(g) else max(size(g), max_from(g + 1))
  let L = lcm_from(0), w = L / min_from(0)
  fn d(g) = L / size(g)
  fn next_from(s, g) = if g >= G then L else min((s / d(g) + 1) * d(g), next_from(s, g + 1))
  fn next(s) = next_from(s, 0)
  fn cards(a, b) = if a >= b then 0 else 1 + cards(next(a), b)
  fn order(a, e, s) = if e <= (a / w + 1) * w then cards(a, s)
                      else if s >= (a / w + 1) * w then cards((a / w + 1) * w, s)
                      else cards((a / w + 1) * w, e) + cards(a, s)
  fn place(s, g) = order(s / d(g) * d(g), (s / d(g) + 1) * d(g), s)
  fn slot_from(s, g) = if g >= G then 0 else max(place(s, g), slot_from(s, g + 1))
  fn card_at(s, e, k) = if s >= e then -1 else if slot_from(s, 0) == k then s else card_at(next(s), e, k)
  fn has(m, g) = g < G and (size(g) == m or has(m, g + 1))
  fn most_x(m, lo, hi) = if lo < hi then max(most_x(m, lo, (lo + hi) / 2), most_x(m, (lo + hi) / 2 + 1, hi))
                         else cards(lo * (L / m), (lo + 1) * (L / m))
  fn most(lo, hi) = if lo < hi then max(most(lo, (lo + hi) / 2), most((lo + hi) / 2 + 1, hi))
                    else if has(lo, 0) then most_x(lo, 0, lo - 1) else 0
  fn gcd_from(g) = if g >= G then 0 else gcd(size(g), gcd_from(g + 1))
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
algorithm ahc_intra implements reduce_scatter { phase reduce_scatter using nb }
algorithm ahc_intra implements all_gather { phase all_gather using nb }
algorithm ahc_intra implements all_reduce { phase all_reduce using nb }
algorithm ahc_inter implements reduce_scatter {
  if p <= 3 { phase reduce_scatter using ring } else { phase reduce_scatter using nb }
}
algorithm ahc_inter implements all_gather {
  if p <= 3 { phase all_gather using ring } else { phase all_gather using nb }
}
algorithm ahc_inter implements all_reduce {
  if p <= 3 { phase all_reduce using ring } else { phase all_reduce using nb }
}
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
algorithm hier implements reduce_scatter {
  fn equal(g) = g >= groups() or size(g) == size(0) and equal(g + 1)
  let L = size(group(r)), gr = group(r)
  if equal(0) {
    units p
    phase reduce_scatter within index(r) units b : { member(b, i) : i in 0 .. L - 1 } using level1
    phase reduce_scatter within group(r) units b : unit member(gr, b) using level0
  } else { phase reduce_scatter using ahc }
}
algorithm hier implements all_gather {
  fn equal(g) = g >= groups() or size(g) == size(0) and equal(g + 1)
  let L = size(group(r)), gr = group(r)
  if equal(0) {
    units p
    phase all_gather within group(r) units b : unit member(gr, b) using level0
    phase all_gather within index(r) units b : { member(b, i) : i in 0 .. L - 1 } using level1
  } else { phase all_gather using ahc }
}
algorithm hier implements all_reduce {
  fn equal(g) = g >= groups() or size(g) == size(0) and equal(g + 1)
  let S = groups(), l = index(r)
  if equal(0) {
    units p
    phase reduce_scatter within group(r) using level0
    phase all_reduce within index(r) units l * S .. l * S + S - 1 using level1
    phase all_gather within group(r) using level0
  } else { phase all_reduce using ahc }
}
algorithm hier implements broadcast {
  fn equal(g) = g >= groups() or size(g) == size(0) and equal(g + 1)
  let S = groups(), l = index(r)
  if equal(0) {
    units p
    phase scatter within group(root) using level0
    phase broadcast within index(r) root member(group(root), l) units l * S .. l * S + S - 1 using level1
    phase all_gather within group(r) using level0
  } else { phase broadcast using level1 }
}
algorithm hier implements reduce {
  fn equal(g) = g >= groups() or size(g) == size(0) and equal(g + 1)
  let S = groups(), l = index(r)
  if equal(0) {
    units p
    phase reduce_scatter within group(r) using level0
    phase reduce within index(r) root member(group(root), l) units l * S .. l * S + S - 1 using level1
    phase gather within group(root) using level0
  } else { phase reduce using level1 }
}
algorithm hier implements scatter {
  fn equal(g) = g >= groups() or size(g) == size(0) and equal(g + 1)
  let L = size(group(r)), gr = group(r)
  if equal(0) {
    units p
    phase scatter within index(root) units b : { member(b, i) : i in 0 .. L - 1 } using level1
    phase scatter within group(r) root member(gr, index(root)) units b : unit member(gr, b) using level0
  } else { phase scatter using level1 }
}
algorithm hier implements gather {
  fn equal(g) = g >= groups() or size(g) == size(0) and equal(g + 1)
  let L = size(group(r)), gr = group(r)
  if equal(0) {
    units p
    phase gather within group(r) root member(gr, index(root)) units b : unit member(gr, b) using level0
    phase gather within index(root) units b : { member(b, i) : i in 0 .. L - 1 } using level1
  } else { phase gather using level1 }
}
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
  } else { phase all_to_all using pairwise }
}
