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
