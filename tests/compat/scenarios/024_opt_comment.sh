# --comment: shown by scontrol (Comment=) and squeue %k; with spaces.
run sbatch -H --comment="a comment with spaces" --wrap true
fields "$J" Comment
run squeue -h -j "$J" -o '%k'
run sbatch -H --comment plain --wrap true
fields "$J" Comment
