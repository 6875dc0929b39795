algorithm nb_binary implements broadcast {
  units 1
  from { (r - pow2(k)) % p : k in 0 .. ceil_log2(p) - 1 }
  for k in 0 .. ceil_log2(p) - 1 {
    let delta = (r - root) % p
    step { if delta < pow2(k) and delta + pow2(k) < p { send all to (r + pow2(k)) % p } }
  }
}
