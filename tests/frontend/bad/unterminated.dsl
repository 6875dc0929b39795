# The file ends inside a step.
algorithm a implements all_reduce {
  units p
  step {
    send all to r + 1 reduce
