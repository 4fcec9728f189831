/** The fixed words of a timesheet, in the languages our clients read; any other language gets English. */
export interface Labels {
  title: string;
  agency: string;
  client: string;
  number: string;
  version: string;
  issued: string;
  period: string;
  project: string;
  ticket: string;
  description: string;
  dates: string;
  people: string;
  hours: string;
  charged: string;
  free: string;
  /** The tag of a line drawn from a time bank, before the bank's name. */
  bank: string;
  correction: string;
  subtotal: string;
  totals: string;
  totalHours: string;
  chargedHours: string;
  freeHours: string;
  bankHours: string;
  banks: string;
  bankName: string;
  balanceBefore: string;
  drawn: string;
  balanceAfter: string;
  noEntries: string;
  /** Money (issue 23): a row's amount, and the document's total due. */
  amount: string;
  totalDue: string;
  /** The tax line when the client has no label of its own. */
  tax: string;
  dueDate: string;
  /** Issue 23's details: the parties' tax ids, the PO number, the payment block, per-entry lines, the replaced number. */
  taxId: string;
  poNumber: string;
  /** Before the voided number a document replaces ("Replaces No. X"). */
  replaces: string;
  payment: string;
  accountHolder: string;
  iban: string;
  bic: string;
  /** Before what free or bank time would have cost at its rate. */
  worth: string;
  date: string;
  person: string;
  /** The hourly rate column of per-entry lines. */
  rate: string;
  /** Between a label and its value (French puts a no-break space before the colon). */
  colon: string;
  /** The pdf's page footer: `{page}` and `{pages}` are filled in by the printer (core/documents/pdf-renderer.ts). */
  pageOf: string;
}

const en: Labels = {
  title: 'Timesheet',
  agency: 'From',
  client: 'Client',
  number: 'No.',
  version: 'Version',
  issued: 'Issued',
  period: 'Period',
  project: 'Project',
  ticket: 'Ticket',
  description: 'Description',
  dates: 'Dates',
  people: 'People',
  hours: 'Hours',
  charged: 'Charged',
  free: 'Free',
  bank: 'Bank',
  correction: 'Correction',
  subtotal: 'Subtotal',
  totals: 'Totals',
  totalHours: 'Total hours',
  chargedHours: 'Charged hours',
  freeHours: 'Free hours',
  bankHours: 'Hours drawn from banks',
  banks: 'Time banks',
  bankName: 'Bank',
  balanceBefore: 'Balance before',
  drawn: 'Drawn',
  balanceAfter: 'Balance after',
  noEntries: 'No time was billed on this timesheet.',
  amount: 'Amount',
  totalDue: 'Total due',
  tax: 'Tax',
  dueDate: 'Due date',
  taxId: 'Tax ID',
  poNumber: 'PO number',
  replaces: 'Replaces No.',
  payment: 'Payment',
  accountHolder: 'Account holder',
  iban: 'IBAN',
  bic: 'BIC',
  worth: 'at rate',
  date: 'Date',
  person: 'Person',
  rate: 'Rate/h',
  colon: ': ',
  pageOf: 'Page {page} of {pages}',
};

const de: Labels = {
  title: 'Stundennachweis',
  agency: 'Von',
  client: 'Kunde',
  number: 'Nr.',
  version: 'Version',
  issued: 'Ausgestellt am',
  period: 'Zeitraum',
  project: 'Projekt',
  ticket: 'Ticket',
  description: 'Beschreibung',
  dates: 'Datum',
  people: 'Personen',
  hours: 'Stunden',
  charged: 'Berechnet',
  free: 'Kostenlos',
  bank: 'Kontingent',
  correction: 'Korrektur',
  subtotal: 'Zwischensumme',
  totals: 'Summen',
  totalHours: 'Stunden gesamt',
  chargedHours: 'Berechnete Stunden',
  freeHours: 'Kostenlose Stunden',
  bankHours: 'Aus Kontingenten',
  banks: 'Stundenkontingente',
  bankName: 'Kontingent',
  balanceBefore: 'Stand vorher',
  drawn: 'Abgebucht',
  balanceAfter: 'Stand nachher',
  noEntries: 'Auf diesem Stundennachweis wurde keine Zeit abgerechnet.',
  amount: 'Betrag',
  totalDue: 'Gesamtbetrag',
  tax: 'Steuer',
  dueDate: 'Fällig am',
  taxId: 'USt-IdNr.',
  poNumber: 'Bestellnummer',
  replaces: 'Ersetzt Nr.',
  payment: 'Zahlung',
  accountHolder: 'Kontoinhaber',
  iban: 'IBAN',
  bic: 'BIC',
  worth: 'zum Satz',
  date: 'Datum',
  person: 'Person',
  rate: 'Satz/Std.',
  colon: ': ',
  pageOf: 'Seite {page} von {pages}',
};

const fr: Labels = {
  title: 'Relevé d’heures',
  agency: 'De',
  client: 'Client',
  number: 'N°',
  version: 'Version',
  issued: 'Émis le',
  period: 'Période',
  project: 'Projet',
  ticket: 'Ticket',
  description: 'Description',
  dates: 'Dates',
  people: 'Intervenants',
  hours: 'Heures',
  charged: 'Facturé',
  free: 'Gratuit',
  bank: 'Banque d’heures',
  correction: 'Correction',
  subtotal: 'Sous-total',
  totals: 'Totaux',
  totalHours: 'Total des heures',
  chargedHours: 'Heures facturées',
  freeHours: 'Heures gratuites',
  bankHours: 'Heures prélevées sur les banques',
  banks: 'Banques d’heures',
  bankName: 'Banque',
  balanceBefore: 'Solde avant',
  drawn: 'Prélevé',
  balanceAfter: 'Solde après',
  noEntries: 'Aucune heure n’est facturée sur ce relevé.',
  amount: 'Montant',
  totalDue: 'Total à payer',
  tax: 'Taxe',
  dueDate: 'Échéance',
  taxId: 'N° TVA',
  poNumber: 'N° de commande',
  replaces: 'Remplace le n°',
  payment: 'Paiement',
  accountHolder: 'Titulaire du compte',
  iban: 'IBAN',
  bic: 'BIC',
  worth: 'au tarif',
  date: 'Date',
  person: 'Intervenant',
  rate: 'Taux/h',
  colon: '\u00a0: ',
  pageOf: 'Page {page} sur {pages}',
};

const byLanguage: Record<string, Labels> = { en, de, fr };

/** The labels for a (resolved) locale's language. */
export function labelsFor(locale: string): Labels {
  return byLanguage[new Intl.Locale(locale).language] ?? en;
}
