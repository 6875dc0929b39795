# `from` names senders for the whole body, so it stands outside the steps (tests/compiler.cmake: check_from_in_step)
algorithm x implements all_gather {
  units p
  step { from all
    send unit r to (r + 1) % p }
}
