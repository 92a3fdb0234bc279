"""The form model's insides, behind its one public home, [`toolnexus.forms`][toolnexus.forms].

Each part in a module of its own, each importing only those after it:

- ``_reader``: [`read_form`][toolnexus.forms.read_form], the one reading of a server's
  ``requestedSchema``, and the limits on what it reads;
- ``_model``: the values it gives, [`Form`][toolnexus.forms.Form],
  [`Field`][toolnexus.forms.Field] and [`Choice`][toolnexus.forms.Choice], each made one
  way, and the rules an answer must meet, each defined once (its quick check and its
  message from that one definition);
- ``_formats``: the string formats and their checks;
- ``_json``: JSON values in words and numbers a 64-bit float holds, for both.

Standard library only, as ``toolnexus.forms`` is.
"""
