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
