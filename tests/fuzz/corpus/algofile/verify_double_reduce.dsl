# expect: at step 1 rank 0 reduces unit 0 from rank 1 twice over: it holds {0,1} and receives {1}
# ranks: 2..8
# Exactly-once: rank 1 sends its contribution to unit 0 twice.
algorithm twice implements all_reduce {
  units 1
  step { if r == 1 { send all to 0 reduce } }
  step { if r == 1 { send all to 0 reduce } }
  step { if r == 0 { send all to 1 } }
}
