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
