# ranks: 1 2 4 8 16
# The recursive-doubling exchange written as the language requires (docs/language.md, section 5): the partner's
# copy lands in a scratch unit, and the next step reduces it in locally, so no step reads a unit it writes.
# For powers of two only.
algorithm rd implements all_reduce {
  units 1 scratch 1
  for k in 0 .. floor_log2(p) - 1 {
    step { send unit 0 to r ^ pow2(k) at unit 1 }
    step { send unit 1 to r at unit 0 reduce }
  }
}
