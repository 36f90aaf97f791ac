"""groundstate: the console script that unites the env server and the trainer."""
