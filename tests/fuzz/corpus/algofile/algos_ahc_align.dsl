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
