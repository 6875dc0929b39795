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
