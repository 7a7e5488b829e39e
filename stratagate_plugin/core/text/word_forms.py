"""Word forms a suffix stripper cannot join: irregular verbs and plurals, a few synonyms.

``base_form`` maps an English word to the form search compares, before stemming: "went"
and "gone" to "go", "children" and "kids" to "child", "mom" to "mother", "three" to "3".
The lists are small, general English (no domain or data-set vocabulary).
"""

_IRREGULAR = """go:went,gone buy:bought make:made take:took,taken see:saw,seen get:got,gotten
run:ran give:gave,given feel:felt meet:met tell:told find:found think:thought bring:brought
begin:began,begun keep:kept lose:lost win:won write:wrote,written draw:drew,drawn
sing:sang,sung teach:taught catch:caught build:built spend:spent send:sent hold:held
choose:chose,chosen fly:flew,flown eat:ate,eaten drive:drove,driven ride:rode,ridden
swim:swam,swum become:became know:knew,known grow:grew,grown fall:fell,fallen
break:broke,broken hear:heard pay:paid sell:sold learn:learnt speak:spoke,spoken
wear:wore,worn come:came sit:sat stand:stood understand:understood leave:left
child:children,kid,kids,kiddo,kiddos person:people man:men woman:women foot:feet
tooth:teeth mouse:mice mother:mom,mum,mommy,mama father:dad,daddy,papa
grandmother:grandma,granny grandfather:grandpa photo:pic,pics,picture,pictures,photograph
2:two 3:three 4:four 5:five 6:six 7:seven 8:eight 9:nine 10:ten 11:eleven 12:twelve"""

BASE_FORMS: dict[str, str] = {
    form: base
    for entry in _IRREGULAR.split()
    for base, forms in [entry.split(":")]
    for form in forms.split(",")
}


def base_form(word: str) -> str:
    """The word's listed base form, else the word itself."""
    return BASE_FORMS.get(word, word)
