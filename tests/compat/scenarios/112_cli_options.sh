# getopt_long's forms and error lines on the commands that parse with it: unique prefixes of
# long options (squeue --state, --part, sinfo --summ), ambiguous and unknown options, a missing
# argument, and --usage. (-V differs by packaging only: Debian's Slurm prints "slurm-wlm".)
run squeue --usage
run sinfo --usage
run scancel --usage
run squeue --sta=RUNNING
run squeue --stat
run squeue --bogus
run squeue -Z
run squeue foo
run squeue --state=RUNNING --noh
run squeue --noh --part=debug --form=%i
run sinfo --summ --noh
run sinfo --bogus
run sinfo -T -Z
run scancel --state=bogus 1
run scancel --bogus
run scancel --use=nosuchuser
run scontrol --bogus
# sbatch, srun and salloc: their synopses, getopt_long's ambiguity on srun's own table.
run sbatch --usage
run srun --usage
run salloc --usage
run sprio --usage
run srun --ntasks-per=2 hostname
run srun --he
# Each --help lists the long options real Slurm's lists (the descriptions are drover's own
# words; squeue's and scontrol's list one more each; sacct, sacctmgr and sreport are
# checked against captured sets in tests/integration/test_cli_surface.py).
for c in sbatch srun salloc sinfo scancel sprio sshare; do
  run sh -c "$c --help | python3 $_HARNESS/../help_options.py"
done
