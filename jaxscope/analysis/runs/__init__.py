"""Run vs eager as plain data: tolerances, the verdict, the causes judged from evidence, the report."""
