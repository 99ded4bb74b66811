# A job submitted by an ordinary user runs as that user: id, environment, file ownership.
run_as "$OTHER_USER" sbatch -o user.out --wrap 'id -un; echo "$SLURM_JOB_USER $SLURM_JOB_UID $HOME"'
wait_done "$J"
fields "$J" UserId GroupId JobState
show_outputs
note "owner of user.out: $(stat -c %U user.out 2>&1)"
