// No declarations: the target's only content is a load-time constructor (line_buffered_output.c).
