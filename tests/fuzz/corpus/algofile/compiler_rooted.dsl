# Small algorithms for stitchc's own tests: a rooted collective and topology queries (tests/compiler.cmake).
algorithm ring implements broadcast {
  units p
  let delta = (r - root) % p
  step t in 0 .. 2 * p - 3 {
    if delta <= p - 2 and t - delta >= 0 and t - delta <= p - 1 {
      send unit t - delta to (r + 1) % p
    }
  }
}
# each group's leader sends everything to the next member of its group
algorithm grp implements all_gather {
  units p
  step { if index(r) == 0 and size(group(r)) > 1 { send unit r to member(group(r), 1) } }
}
