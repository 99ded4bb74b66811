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
