# --hold (-H): pending with Reason=JobHeldUser and Priority=0; scontrol release starts it.
run sbatch --hold -o held.out --wrap 'echo ran'
fields "$J" JobState Reason Priority
run squeue -h -j "$J" -o '%i %T %r'
run scontrol release "$J"
wait_done "$J"
fields "$J" JobState Reason ExitCode
show_outputs
