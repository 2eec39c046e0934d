// German (Deutsch): the pages' texts, key for key as in en.ts; formal address (Sie).
import type { Catalogue } from './en.js'

export const de: Catalogue = {
  'layout.footer': 'Geben Sie Ihr Passwort nur auf Seiten von {site} ein.',
  'layout.support': 'Hilfe und Support',

  'common.continue': 'Weiter',
  'common.signIn': 'Anmelden',
  'common.denied': 'Abgelehnt',
  'common.sessionEnded.title': 'Ihre Sitzung ist abgelaufen',
  'common.sessionEnded.text':
    'Ihre Sitzung ist abgelaufen. Bitte melden Sie sich erneut an, um die Anfrage zu beantworten. Es wurde nichts geändert.',
  'common.unanswered': 'Wählen Sie Zustimmen oder Ablehnen.',

  'signIn.title': 'Anmelden',
  'signIn.toClient': 'um mit {client} fortzufahren',
  'signIn.toAccount': 'bei Ihrem Konto',
  'signIn.replaces': 'Sie sind als {user} angemeldet. Eine Anmeldung hier ersetzt diese Sitzung.',
  'signIn.failed':
    'Benutzername oder Passwort ist falsch, oder dieses Konto kann sich gerade nicht anmelden. Prüfen Sie beides und versuchen Sie es noch einmal.',
  'signIn.noWay': 'Für diese Anwendung gibt es hier keine Möglichkeit, sich anzumelden. Wenden Sie sich an ihre Administration.',
  'signIn.username': 'Benutzername',
  'signIn.password': 'Passwort',
  'signIn.passwordHint': 'Melden Sie sich mit der E-Mail-Adresse Ihrer Organisation an? Dann lassen Sie das Passwort leer.',
  'signIn.submit': 'Anmelden',
  'signIn.or': 'oder',
  'signIn.withProvider': 'Mit {provider} anmelden',
  'signIn.forward.title': 'Weiter mit {provider}',
  'signIn.forward.text':
    'Mit Ihrer E-Mail-Adresse melden Sie sich bei {provider} an. Sie werden dorthin weitergeleitet und nach der Anmeldung hierher zurückgebracht.',

  'signOut.title': 'Abmelden',
  'signOut.heading': 'Abmelden?',
  'signOut.who': 'Sie sind als {user} angemeldet.',
  'signOut.text': 'Anwendungen fragen dann wieder nach Ihrem Passwort, wenn sie Sie das nächste Mal hierher schicken.',
  'signOut.submit': 'Abmelden',
  'signedOut.title': 'Abgemeldet',
  'signedOut.heading': 'Sie sind abgemeldet',
  'signedOut.text': 'Ihre Sitzung auf dieser Website ist beendet.',
  'signedOut.again': 'Wieder anmelden',

  'logout.asks': '{client} möchte Sie abmelden.',
  'logout.anApplication': 'Eine Anwendung möchte Sie abmelden.',
  'logout.text':
    'Die Abmeldung beendet Ihre Sitzung hier: Anwendungen fragen wieder nach Ihrem Passwort, wenn sie Sie das nächste Mal auf diese Website schicken.',
  'logout.stay': 'Angemeldet bleiben',

  'decision.heading': '{client} bittet um Ihre Zustimmung',
  'decision.signedInAs': 'Angemeldet als {user}',
  'decision.notYou': 'Nicht Sie?',
  'decision.checkCode': 'Prüfen Sie diesen Code',
  'decision.checkCodeHint':
    'Er muss mit dem Code übereinstimmen, der dort angezeigt wird, wo die Anfrage gestellt wurde. Wenn nicht, lehnen Sie ab.',
  'decision.scopes': '{client} erhält Zugriff auf',
  'decision.remember': 'Diese Entscheidung für {client} merken',
  'decision.approve': 'Zustimmen',
  'decision.allow': 'Erlauben',
  'decision.deny': 'Ablehnen',
  'decision.detail.identityProvider': 'Identitätsanbieter',
  'decision.detail.tenant': 'Mandant',

  'scope.openid': 'Ihre Anmeldung',
  'scope.openid.about': 'Ihre Benutzerkennung, damit die Anwendung weiß, dass Sie es sind',
  'scope.profile': 'Ihr Profil',
  'scope.profile.about': 'Name, Spitzname, Bild, Website, Geschlecht, Geburtsdatum, Zeitzone und Sprache',
  'scope.email': 'Ihre E-Mail-Adresse',
  'scope.email.about': 'Auch, ob sie bestätigt ist',
  'scope.address': 'Ihre Postanschrift',
  'scope.address.about': 'Straße, Ort, Postleitzahl und Land',
  'scope.phone': 'Ihre Telefonnummer',
  'scope.phone.about': 'Auch, ob sie bestätigt ist',
  'scope.offline_access': 'Angemeldet bleiben',
  'scope.offline_access.about': 'Zugriff auch, wenn Sie die Anwendung gerade nicht nutzen',

  'consent.title': 'Zugriff erlauben',
  'consent.heading': '{client} möchte auf Ihr Konto zugreifen',

  'ciba.unknown.title': 'Anfrage nicht gefunden',
  'ciba.unknown.text': 'Unter dieser Adresse gibt es keine Anmeldeanfrage. Prüfen Sie den Link, den Sie erhalten haben.',
  'ciba.expired.title': 'Diese Anfrage ist abgelaufen',
  'ciba.expired.text': 'Sie kann nicht mehr bestätigt werden. Beginnen Sie noch einmal auf dem Gerät, das gefragt hat.',
  'ciba.decided.approved': 'Dieser Anfrage wurde bereits zugestimmt',
  'ciba.decided.denied': 'Diese Anfrage wurde bereits abgelehnt',
  'ciba.decided.text': 'Hier ist nichts mehr zu tun.',
  'ciba.wrongUser.title': 'Diese Anfrage gilt einem anderen Konto',
  'ciba.wrongUser.text': 'Sie sind als {user} angemeldet, aber {client} hat um die Zustimmung einer anderen Person gebeten.',
  'ciba.wrongUser.waiting': 'Die Anfrage wartet weiter: Melden Sie sich als die richtige Person an, um sie zu beantworten.',
  'ciba.wrongUser.action': 'Als andere Person anmelden',
  'ciba.decision.title': 'Anmeldung bestätigen',
  'ciba.approved.title': 'Zugestimmt',
  'ciba.approved.text': 'Sie haben der Anfrage von {client} zugestimmt. Sie können diese Seite schließen.',
  'ciba.denied.text': 'Sie haben die Anfrage von {client} abgelehnt. Sie können diese Seite schließen.',

  'device.title': 'Gerät verbinden',
  'device.enter': 'Geben Sie den Code ein, den Ihr Fernseher, Ihre Konsole oder Ihr anderes Gerät anzeigt.',
  'device.confirm': 'Prüfen Sie, ob Ihr Gerät diesen Code anzeigt, und drücken Sie dann Weiter.',
  'device.unknown':
    'Dieser Code ist nicht gültig oder gehört zu einer Anfrage, die es nicht mehr gibt. Prüfen Sie den Code auf Ihrem Gerät und geben Sie ihn noch einmal ein.',
  'device.code': 'Code',
  'device.another': 'Anderen Code eingeben',
  'device.blocked.title': 'Zu viele falsche Codes',
  'device.blocked.text':
    'Aus Ihrem Netz wurden zu viele Codes eingegeben, die zu keinem Gerät passen. Bitte warten Sie einige Minuten und versuchen Sie es dann noch einmal.',
  'device.expired.title': 'Dieser Code ist abgelaufen',
  'device.expired.text': 'Er kann nicht mehr verwendet werden. Beginnen Sie auf Ihrem Gerät neu, um einen neuen Code zu erhalten.',
  'device.used.title': 'Dieser Code wurde bereits verwendet',
  'device.used.text':
    'Jemand hat dieser Anfrage bereits zugestimmt oder sie abgelehnt. Falls Sie das nicht waren, beginnen Sie auf Ihrem Gerät neu.',
  'device.decision.heading': '{client} auf Ihrem Gerät verbinden?',
  'device.approved.title': 'Gerät verbunden',
  'device.approved.text':
    'Sie haben {client} zugestimmt. Kehren Sie zu Ihrem Gerät zurück: Es macht von selbst weiter. Sie können diese Seite schließen.',
  'device.denied.text': 'Sie haben {client} abgelehnt. Das Gerät erhält keinen Zugriff. Sie können diese Seite schließen.',

  'federation.someProvider': 'Der Identitätsanbieter',
  'federation.startAgain': 'Kehren Sie zu der Anwendung zurück, von der Sie kamen, und beginnen Sie neu.',
  'federation.signInAgain': 'Wieder anmelden',
  'federation.unknown.title': 'Anmeldeoption nicht gefunden',
  'federation.unknown.text': 'Auf diese Weise kann man sich hier nicht anmelden.',
  'federation.unavailable.title': 'Anmeldeoption nicht verfügbar',
  'federation.notAllowed': '{provider} kann nicht zur Anmeldung bei dieser Anwendung verwendet werden.',
  'federation.disabled': 'Die Anmeldung mit {provider} ist zurzeit ausgeschaltet.',
  'federation.incomplete.title': 'Diese Anmeldung kann nicht abgeschlossen werden',
  'federation.invalidState':
    'Die Antwort von {provider} gehört zu keiner Anmeldung, die in diesem Browser begonnen wurde, ist abgelaufen oder wurde bereits verwendet. Sie sind nicht angemeldet.',
  'federation.invalidResponse':
    'Die Antwort von {provider} konnte nicht geprüft werden und wurde daher nicht angenommen. Sie sind nicht angemeldet.',
  'federation.cancelled.title': 'Anmeldung abgebrochen',
  'federation.cancelled.text': 'Die Anmeldung mit {provider} wurde abgebrochen oder abgelehnt. Sie sind nicht angemeldet.',
  'federation.accountDisabled.title': 'Konto gesperrt',
  'federation.accountDisabled.text':
    'Das Konto, mit dem Sie sich angemeldet haben, kann hier zurzeit nicht verwendet werden. Sie sind nicht angemeldet.',
  'federation.upstream.title': '{provider} ist nicht erreichbar',
  'federation.upstream.error':
    '{provider} hat die Anmeldung nicht abgeschlossen. Sie sind nicht angemeldet. Bitte versuchen Sie es gleich noch einmal.',
  'federation.upstream.timeout':
    '{provider} hat die Anmeldung nicht rechtzeitig abgeschlossen. Sie sind nicht angemeldet. Bitte versuchen Sie es gleich noch einmal.',
  'federation.signedIn.title': 'Angemeldet',
  'federation.signedIn.text': 'Sie haben sich mit {provider} angemeldet. Es geht gleich zurück…',

  'formPost.title': 'Zurück zur Anwendung',
  'formPost.noScript': 'JavaScript ist ausgeschaltet: Drücken Sie Weiter, um zur Anwendung zurückzukehren.',

  'error.invalid_request': 'Diese Anfrage ist nicht gültig',
  'error.not_found': 'Seite nicht gefunden',
  'error.access_denied': 'Zugriff verweigert',
  'error.temporarily_unavailable': 'Bitte versuchen Sie es später noch einmal',
  'error.server_error': 'Etwas ist schiefgelaufen',
  'error.other': 'Diese Anfrage konnte nicht ausgeführt werden',
  'error.server': 'Der Server konnte Ihre Anfrage nicht ausführen. Es wurde nichts geändert. Bitte versuchen Sie es gleich noch einmal.',
  'error.client':
    'Die Seite kann für diese Anfrage nicht angezeigt werden. Kehren Sie zu der Anwendung zurück, von der Sie kamen, und beginnen Sie neu.',
  'error.details': 'Details: {description}.',
  'formRefused.title': 'Formular nicht angenommen',
  'formRefused.crossSite':
    'Dieses Formular wurde von einer anderen Website gesendet, nicht von einer Seite dieser Website. Zu Ihrem Schutz wurde es nicht angenommen.',
  'formRefused.token':
    'Dieses Formular ist abgelaufen oder stammt nicht von der Seite, die Sie hier geöffnet haben (etwa nach einer neuen Anmeldung in einem anderen Tab). Zu Ihrem Schutz wurde es nicht angenommen.',
  'formRefused.nothingChanged': 'Es wurde nichts geändert.',
  'formRefused.again': 'Neu beginnen',
  'tooMany.title': 'Zu viele Versuche',
  'tooMany.text': 'Aus Ihrem Netz kamen zu viele Versuche. Bitte warten Sie eine Minute und versuchen Sie es dann noch einmal.',
}
