# expect: oneshot declares scratch units, which a phase on a sub-communicator cannot map to its caller's units
# ranks: 2..4
# Sub-communicators: the called algorithm parks copies in scratch units, which have no place in the caller.
algorithm oneshot implements all_reduce {
  units 1 scratch p
  step { for t in 1 .. p - 1 { send unit 0 to (r + t) % p at unit 1 + r } }
}
algorithm outer implements all_reduce {
  units 4
  phase all_reduce within all using oneshot
}
