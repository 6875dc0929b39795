# root5.dsl - a ring broadcast that is right for every root but 5 when p > 32: the chain stops one rank short
# there. The verifier's sample of roots above p = 32 (0..3, p/2, p-2, p-1) does not hold 5, so only a proof of
# the root a call uses catches it (issue 18, item 3).
algorithm root5 implements broadcast {
  units p
  from { (r - 1) % p }
  let delta = (r - root) % p
  let last = p - 2 - (root == 5 and p > 32)
  step t in 0 .. 2 * p - 3 {
    if delta <= last and t - delta >= 0 and t - delta <= p - 1 {
      send unit t - delta to (r + 1) % p
    }
  }
}
