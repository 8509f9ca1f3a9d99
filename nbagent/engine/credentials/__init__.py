"""Which texts name a credential, and the forms a secret takes: the rules that read a name beside a
value (environment variables, flags, config lines, tables, a kernel's variables) and a key's shape,
used by the loop's sanitising boundary and by what reads the notebook and files for the model.
"""
