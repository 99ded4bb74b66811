# --comment: shown by scontrol (Comment=) and squeue %k; with spaces.
run sbatch --comment="a comment with spaces" --wrap true
A=$J
run sbatch --comment plain --wrap true
B=$J
wait_done "$A"
wait_done "$B"
fields "$A" Comment
fields "$B" Comment
run squeue -h -t all -j "$A" -o '%k'
