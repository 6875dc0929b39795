# expect: div_zero.dsl:5: error: odd all_reduce cannot be instantiated for p = 4: division by zero (3 / 0) (p = 4, rank 0)
# ranks: 4..8
# Evaluation: an expression that fails only for some p.
algorithm odd implements all_reduce {
  units 3 / (p - 4) + 10
}
