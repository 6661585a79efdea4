"""Tables of distinct values and the one scale interface (:mod:`.scale`): building
(:mod:`.build`), certification (:mod:`.certificate`), lookup kernels, and one module per
layout (:mod:`.layouts`: entries, implicit, fraction, formal, and oracles: rank oracles that
count ranks on demand, :mod:`.oracles` with :mod:`.oracle_form` and :mod:`.oracle_kernels`)."""
