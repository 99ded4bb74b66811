# --parsable prints the bare id; -Q/--quiet prints nothing (even with --parsable); the jobs
# still run.
run sbatch --parsable --wrap true
wait_done "$J"
fields "$J" JobState
run sbatch -Q -o quiet-%j.out --wrap 'echo quiet'
run sbatch --quiet --parsable -o quiet-parsable.out --wrap 'echo quiet parsable'
wait_queue_empty
show_outputs
