# ranks: 1..12
# Two lanes side by side: ring on the first half of the units while mesh runs on the second half; the split lasts
# as long as the ring's lane (2(p-1) steps), the mesh lane's two steps run at its start.
algorithm lanes implements all_reduce {
  units 2 * p
  split {
    lane 0 .. p - 1 { phase all_reduce within all units 0 .. p - 1 using ring }
    lane p .. 2 * p - 1 { phase all_reduce within all units p .. 2 * p - 1 using mesh }
  }
}
algorithm ring implements all_reduce {
  units p
  step t in 0 .. p - 2 { send unit (r - 1 - t) % p to (r + 1) % p reduce }
  step t in 0 .. p - 2 { send unit (r - t) % p to (r + 1) % p }
}
algorithm mesh implements all_reduce {
  units p
  step { for t in 1 .. p - 1 { send unit (r + t) % p to (r + t) % p reduce } }
  step { for t in 1 .. p - 1 { send unit r to (r + t) % p } }
}
