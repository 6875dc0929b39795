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
algorithm nhr_oneshot implements all_reduce {
  units 1
  phase reduce using nhr_oneshot
  phase broadcast using nhr_oneshot
}
